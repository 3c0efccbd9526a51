import type { OptionSpec } from "../../options/spec.js";

/** The shells `webhook-cli completion` writes scripts for. */
export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

/** completion takes no options: the shell is its argument. */
export const COMPLETION_OPTIONS = [] as const satisfies readonly OptionSpec[];
