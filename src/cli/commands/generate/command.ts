import { MESSAGE_TYPES } from "../../../messages/names.js";
import type { CommandDeclaration } from "../../shared/declaration.js";
import { GENERATE_OPTIONS } from "./options.js";

export const generateCommand: CommandDeclaration<typeof GENERATE_OPTIONS, [string[]]> = {
  name: "generate",
  description: "print example messages of every type (page screen identify track alias group delete) as NDJSON",
  arguments: [{ name: "[types...]", description: `message types to print (default: all): ${MESSAGE_TYPES.join(", ")}`, values: MESSAGE_TYPES }],
  options: GENERATE_OPTIONS,
  examples: ["webhook-cli generate", "webhook-cli generate track identify --user-id u_42 --now 2024-01-01T00:00:00.000Z --seed 7 --pretty"],
  async run(options, [types], { io }) {
    const [{ generate }, { parseMessageTypes }] = await Promise.all([import("./index.js"), import("../../options/parse.js")]);
    return generate({ ...options, types: parseMessageTypes(types) }, io);
  },
};
