import { audienceCommand } from "../commands/audience/command.js";
import { completionCommand } from "../commands/completion/command.js";
import { demoCommand } from "../commands/demo/command.js";
import { expectCommand } from "../commands/expect/command.js";
import { functionCommand } from "../commands/function/command.js";
import { generateCommand } from "../commands/generate/command.js";
import { inspectCommand } from "../commands/inspect/command.js";
import { listenCommand } from "../commands/listen/command.js";
import { replayCommand } from "../commands/replay/command.js";
import { serveCommand } from "../commands/serve/command.js";
import { sendCommand } from "../commands/send/command.js";
import { signCommand } from "../commands/sign/command.js";
import { verifyCommand } from "../commands/verify/command.js";
import type { CommandDeclaration, GroupDeclaration } from "../shared/declaration.js";

/**
 * Every command, in the order `--help` lists them. program.ts declares them
 * to commander in one loop; field-flags.ts reads their option tables.
 */
export const COMMANDS: readonly (CommandDeclaration | GroupDeclaration)[] = [
  generateCommand,
  sendCommand,
  listenCommand,
  inspectCommand,
  expectCommand,
  replayCommand,
  serveCommand,
  audienceCommand,
  signCommand,
  verifyCommand,
  functionCommand,
  demoCommand,
  completionCommand,
];
