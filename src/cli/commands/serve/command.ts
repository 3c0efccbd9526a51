import type { CommandDeclaration } from "../../shared/declaration.js";
import { SERVE_OPTIONS } from "./options.js";

export const serveCommand: CommandDeclaration<typeof SERVE_OPTIONS> = {
  name: "serve",
  description: "local stand-in for the collection service: takes client batches, stores them durably, forwards them to the webhooks",
  options: SERVE_OPTIONS,
  examples: [
    "webhook-cli serve --write-key wk_test --url http://127.0.0.1:8080/hook --secret-file .secret",
    "webhook-cli serve --config webhook-cli.json --state .webhook-cli --json",
    'curl -u wk_test: -H \'Content-Type: application/json\' -d \'{"userId":"u1","event":"Signed Up"}\' http://127.0.0.1:8088/v1/track',
  ],
  async run(options, _, { io }) {
    return (await import("./index.js")).serve(options, io);
  },
};
