import type { CommandDeclaration } from "../../shared/declaration.js";
import { INSPECT_OPTIONS } from "./options.js";

export const inspectCommand: CommandDeclaration<typeof INSPECT_OPTIONS, [string]> = {
  name: "inspect",
  description: "open a listen recording in the inspector page: search it, open each request, edit and resend (the file is only read)",
  arguments: [{ name: "<file>", description: "a listen --record recording (NDJSON)" }],
  options: INSPECT_OPTIONS,
  examples: ["webhook-cli inspect received.ndjson", "webhook-cli inspect received.ndjson --port 4041 --secret-file .secret"],
  async run(options, [file], { io }) {
    return (await import("./index.js")).inspect({ ...options, file }, io);
  },
};
