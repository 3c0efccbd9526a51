import type { Command } from "commander";
import type { CommandContext } from "../io.js";

// Placeholder: the `send` command lands with its issue.
export function registerSend(_program: Command, _context: CommandContext): void {}
