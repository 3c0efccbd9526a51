import type { CommandDeclaration, GroupDeclaration } from "../../shared/declaration.js";
import { AUDIENCE_SYNC_OPTIONS } from "./options.js";

const syncCommand: CommandDeclaration<typeof AUDIENCE_SYNC_OPTIONS> = {
  name: "sync",
  description: "send an identify for every membership change since the last delivered sync (all members on the first)",
  options: AUDIENCE_SYNC_OPTIONS,
  examples: [
    "webhook-cli audience sync --name 'VIP-Users 2024' --members vip.txt --state audience-state.json --url http://127.0.0.1:8080/hook --secret-file .secret",
  ],
  async run(options, _, { io }) {
    return (await import("./index.js")).audienceSync(options, io);
  },
};

export const audienceCommand: GroupDeclaration = {
  name: "audience",
  description: "send an audience's membership changes as identify messages",
  subcommands: [syncCommand],
};
