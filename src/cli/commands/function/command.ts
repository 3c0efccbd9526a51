import type { CommandDeclaration, GroupDeclaration } from "../../shared/declaration.js";
import { FUNCTION_RUN_OPTIONS } from "./options.js";

const runCommand: CommandDeclaration<typeof FUNCTION_RUN_OPTIONS, [string, string | undefined]> = {
  name: "run",
  description: "run a destination function on events, or a source function on a test request, as the service runs it, and show what it did",
  arguments: [
    { name: "<file>", description: "the function: a JavaScript file with onTrack, onIdentify, … or onBatch (destination), or onRequest (source)" },
    { name: "[events]", description: "a destination function's events, as send reads them: a file, or - for standard input" },
  ],
  options: FUNCTION_RUN_OPTIONS,
  examples: [
    'webhook-cli function run slack-alert.js --type track --settings \'{"channel":"#sales"}\' --function-egress http://127.0.0.1:8080/egress',
    "webhook-cli function run github-source.js --request issue-opened.json --json",
  ],
  limits: ["5 s per invocation (the service's limit); a source's webhook body up to 512 KiB; a message it emits up to 32 KB"],
  async run(options, [file, events], { io }) {
    const { functionRun } = await import("./index.js");
    return functionRun({ ...options, file, events }, io);
  },
};

export const functionCommand: GroupDeclaration = {
  name: "function",
  description: "run the service's destination and source functions locally",
  subcommands: [runCommand],
};
