import { AUDIENCE_SYNC_OPTIONS } from "./audience.js";
import { GENERATE_OPTIONS } from "./generate.js";
import { LISTEN_OPTIONS } from "./listen.js";
import { REPLAY_OPTIONS } from "./replay.js";
import { SEND_OPTIONS } from "./send.js";
import { SERVE_OPTIONS } from "./serve.js";
import type { OptionTable } from "./spec.js";

// Library errors name the input field (`urls`); the CLI shows the flag that fills it (`--url`).
const FLAG_OF_FIELD = new Map<string, string>();
for (const table of [SEND_OPTIONS, LISTEN_OPTIONS, REPLAY_OPTIONS, SERVE_OPTIONS, AUDIENCE_SYNC_OPTIONS, GENERATE_OPTIONS] as OptionTable[]) {
  for (const spec of table) if (!FLAG_OF_FIELD.has(spec.key)) FLAG_OF_FIELD.set(spec.key, spec.flag);
}

/** The flag of an option key, or undefined when no command has one. */
export function flagOfField(field: string): string | undefined {
  return FLAG_OF_FIELD.get(field);
}
