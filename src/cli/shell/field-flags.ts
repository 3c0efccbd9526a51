import { COMMANDS } from "./command-table.js";
import type { CommandDeclaration, GroupDeclaration } from "../shared/declaration.js";

// Library errors name the input field (`urls`); the CLI shows the flag that fills it (`--url`).
// A key means the same flag in every table that has it (test/unit/option-tables.test.ts).
const FLAG_OF_FIELD = new Map<string, string>();
const commands = (declaration: CommandDeclaration | GroupDeclaration): readonly CommandDeclaration[] =>
  "subcommands" in declaration ? declaration.subcommands : [declaration];
for (const command of COMMANDS.flatMap(commands)) {
  for (const spec of command.options) if (!FLAG_OF_FIELD.has(spec.key)) FLAG_OF_FIELD.set(spec.key, spec.flag);
}

/** The flag of an option key, or undefined when no command has one. */
export function flagOfField(field: string): string | undefined {
  return FLAG_OF_FIELD.get(field);
}
