import type { Command } from "commander";
import type { CommandContext } from "../io.js";

// Placeholder: the `audience` command lands with its issue.
export function registerAudience(_program: Command, _context: CommandContext): void {}
