import type { Command } from "commander";
import type { CommandContext } from "../io.js";

// Placeholder: the `listen` command lands with its issue.
export function registerListen(_program: Command, _context: CommandContext): void {}
