// Loaded with --import: appends the URL of every module the process resolves to
// $RECORD_RESOLVED_TO (a file: with module.register the hook runs on another thread).
import { installResolveHook } from "./install.mjs";
import { resolve } from "./record-resolved-hooks.mjs";

installResolveHook(resolve, new URL("./record-resolved-hooks.mjs", import.meta.url));
