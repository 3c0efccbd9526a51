import type { CommandDeclaration } from "../../shared/declaration.js";
import { EXPECT_OPTIONS } from "./options.js";

export const expectCommand: CommandDeclaration<typeof EXPECT_OPTIONS> = {
  name: "expect",
  description: "wait until a running listen has received the requests you expect: exit 0, else 1 with what did arrive (for shell and CI)",
  options: EXPECT_OPTIONS,
  examples: [
    "webhook-cli expect --from listen.url --ready --pid $!     # after listen --ready-file listen.url &",
    "webhook-cli expect --from listen.url --type track --count 3 --timeout 30s",
    'webhook-cli expect --from http://127.0.0.1:4040 --type track --event "Order Completed" --user-id u_42',
    "webhook-cli expect --from listen.url --verdict invalid --count 1 --since 1m",
  ],
  async run(options, _, { io }) {
    return (await import("./index.js")).expectRequests(options, io);
  },
};
