import type { CommandDeclaration } from "../../declaration.js";
import { LISTEN_OPTIONS } from "./options.js";

export const listenCommand: CommandDeclaration<typeof LISTEN_OPTIONS> = {
  name: "listen",
  description: "local receiver (POST, PUT, PATCH; messages, payloads, batches) that verifies X-Signature and checks message shapes",
  options: LISTEN_OPTIONS,
  examples: [
    "webhook-cli listen --secret-file .secret",
    "webhook-cli listen --port 0 --secret-file .secret --count 7 --junit report.xml",
    "webhook-cli listen --script 503,503,timeout,200 --record received.ndjson",
    "webhook-cli listen --responses rules.json --respond-header 'X-Env: test'",
    "webhook-cli listen --secret-file .secret --forward-to http://localhost:3000/webhook --ui",
  ],
  async run(options, _, { io }) {
    return (await import("./index.js")).listen(options, io);
  },
};
