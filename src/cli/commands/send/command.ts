import type { CommandDeclaration } from "../../shared/declaration.js";
import { SEND_OPTIONS } from "./options.js";

export const sendCommand: CommandDeclaration<typeof SEND_OPTIONS, [string | undefined]> = {
  name: "send",
  description: "sign and deliver messages, in order, like the Webhooks destination (a JSON object, a JSON array, NDJSON or concatenated JSON; or --type)",
  arguments: [{ name: "[file]", description: "messages to send: a file, or - for standard input" }],
  options: SEND_OPTIONS,
  examples: [
    "webhook-cli send --type track --url http://127.0.0.1:8080/hook --secret-file .secret",
    "webhook-cli generate | webhook-cli send - --url https://example.com/hook --retry-window 30s --json",
  ],
  async run(options, [file], { io }) {
    const { send } = await import("./index.js");
    return send({ ...options, file }, io);
  },
};
