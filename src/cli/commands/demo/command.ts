import type { CommandDeclaration } from "../../shared/declaration.js";
import { DEMO_OPTIONS } from "./options.js";

export const demoCommand: CommandDeclaration<typeof DEMO_OPTIONS> = {
  name: "demo",
  description: "start a receiver, send every message type signed to it, show the verified results",
  options: DEMO_OPTIONS,
  examples: ["webhook-cli demo", "webhook-cli demo --verbose"],
  async run(options, _, { io }) {
    return (await import("./index.js")).demo(options, io);
  },
};
