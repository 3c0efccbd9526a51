import type { CommandDeclaration } from "../../shared/declaration.js";
import { REPLAY_OPTIONS } from "./options.js";

export const replayCommand: CommandDeclaration<typeof REPLAY_OPTIONS, [string]> = {
  name: "replay",
  description: "re-sign and deliver a recorded NDJSON log (listen --record envelopes, bare messages or dead-letter lines)",
  arguments: [{ name: "<file>", description: "the NDJSON log: a file, or - for standard input" }],
  options: REPLAY_OPTIONS,
  examples: [
    "webhook-cli replay recording.ndjson --url http://127.0.0.1:8080/hook --secret-file .secret",
    "webhook-cli replay recording.ndjson --url https://staging.example.com/hook --concurrency 32 --dead-letter failed.ndjson --retry-window 1m",
    "webhook-cli replay failed.ndjson --url https://staging.example.com/hook --from-line 1200 --json",
    "webhook-cli replay recording.ndjson --url http://127.0.0.1:3001/hook --results new.ndjson --compare old.ndjson --ignore '$.requestId'",
  ],
  async run(options, [file], { io }) {
    return (await import("./index.js")).replayCommand({ ...options, file }, io);
  },
};
