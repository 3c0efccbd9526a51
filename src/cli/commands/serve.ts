import type { Command } from "commander";
import type { CommandContext } from "../io.js";

// Placeholder: the `serve` command lands with its issue.
export function registerServe(_program: Command, _context: CommandContext): void {}
