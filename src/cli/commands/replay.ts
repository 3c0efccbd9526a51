import type { Command } from "commander";
import type { CommandContext } from "../io.js";

// Placeholder: the `replay` command lands with its issue.
export function registerReplay(_program: Command, _context: CommandContext): void {}
