import type { Command } from "commander";
import type { CommandContext } from "../io.js";

// Placeholder: the `demo` command lands with its issue.
export function registerDemo(_program: Command, _context: CommandContext): void {}
