import type { Command } from "commander";
import { UsageError } from "../../../errors.js";
import { didYouMean } from "../../../util/suggest.js";
import { bashScript } from "./bash.js";
import { fishScript } from "./fish.js";
import { completionModel } from "./model.js";
import { zshScript } from "./zsh.js";
import type { CliIo } from "../../terminal/io.js";
import { SHELLS, type Shell } from "./options.js";

const SCRIPTS: Record<Shell, typeof bashScript> = { bash: bashScript, zsh: zshScript, fish: fishScript };

/** Prints the completion script of `shell` for the whole command table of `program`. */
export function completion(shell: string, program: Command, io: CliIo): number {
  if (!(SHELLS as readonly string[]).includes(shell)) {
    throw new UsageError(`unknown shell "${shell}"${didYouMean(shell, SHELLS)}: expected one of ${SHELLS.join(", ")}`);
  }
  io.stdout.write(SCRIPTS[shell as Shell](completionModel(program)));
  return 0;
}
