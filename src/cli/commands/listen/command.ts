import type { CommandDeclaration } from "../../shared/declaration.js";
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
  // The same figures as the code's constants (test/unit/cli-help.test.ts checks them) and README#limits.
  limits: [
    "a request body: 1 MiB (413); an app's answer relayed by --forward-to: 8 MiB (502)",
    "bodies in memory at once: 32 MiB, then 503 with Retry-After",
    "pretty-printing: under 4 MiB of pretty text, else raw; inspector pages: 16 at once (503)",
    "with these and the defaults above, listen stays under 640 MB of memory (docs/receiver.md#memory)",
  ],
  async run(options, _, { io }) {
    return (await import("./index.js")).listen(options, io);
  },
};
