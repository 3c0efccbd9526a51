// Registered with --import: appends the URL of every module the process resolves to
// $RECORD_RESOLVED_TO. The hooks run on their own thread, so they write a file.
import { register } from "node:module";

register("./record-resolved-hooks.mjs", import.meta.url, { data: { out: process.env.RECORD_RESOLVED_TO } });
