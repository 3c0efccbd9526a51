import type { CommandDeclaration } from "../../shared/declaration.js";
import { COMPLETION_OPTIONS, SHELLS } from "./options.js";

export const completionCommand: CommandDeclaration<typeof COMPLETION_OPTIONS, [string]> = {
  name: "completion",
  description: "print a shell completion script for bash, zsh or fish (install lines in the README)",
  arguments: [{ name: "<shell>", description: `the shell: ${SHELLS.join(", ")}`, values: SHELLS }],
  options: COMPLETION_OPTIONS,
  wholeProgram: true,
  examples: [
    "source <(webhook-cli completion bash)      # in ~/.bashrc",
    "mkdir -p ~/.config/fish/completions && webhook-cli completion fish > ~/.config/fish/completions/webhook-cli.fish",
  ],
  async run(_, [shell], { io, program }) {
    return (await import("./index.js")).completion(shell, program, io);
  },
};
