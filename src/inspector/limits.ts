/*
 * The defaults of the inspector's bounds, apart from the store so that the
 * option tables (loaded for --help) do not load it.
 */

/** Default of `--ui-keep`: the recording file is the full history, the page the recent one. */
export const DEFAULT_KEEP = 1_000;

/** Default of `--ui-history-mb`: what the kept rows may cost in memory (raw bodies, kept answers, headers). */
export const DEFAULT_HISTORY_MB = 128;
