import type { OptionsOf, OptionSpec } from "./spec.js";

/**
 * The Webhooks (Actions) flags (docs/actions.md#settings) of send, replay and serve. Like
 * `--header`, the per-webhook ones apply to the `--url` targets; the config file gives each
 * webhook its own `method`, `data` and `batchSize`.
 */
export const ACTIONS_OPTIONS = [
  {
    key: "destination",
    flag: "--destination",
    arg: "<kind>",
    kind: "destination",
    shownDefault: "classic, or the config's destination",
    help: "send as the classic Webhooks destination or as Webhooks (Actions): classic or actions",
  },
  {
    key: "method",
    flag: "--method",
    arg: "<method>",
    kind: "httpMethod",
    shownDefault: "POST",
    help: "actions: the method of the --url targets: POST, PUT or PATCH",
  },
  {
    key: "data",
    flag: "--data",
    arg: "<mapping>",
    kind: "string",
    nonEmpty: true,
    shownDefault: "$., the whole message",
    help: 'actions: each request\'s body, for the --url targets: a path such as $.properties, or a JSON object of literals and {"@path": "$.…"}',
  },
  {
    key: "batchSize",
    flag: "--batch-size",
    arg: "<n>",
    kind: "integer",
    min: 1,
    max: 4000,
    help: "actions: send the --url targets JSON arrays of up to N events (without it, one event per request); with --function: events per onBatch call (the service's 20 when the function has onBatch, at most 400; 1 calls the single-event handlers)",
  },
] as const satisfies readonly OptionSpec[];

/** serve's partial batches (docs/actions.md#batches). */
export const BATCH_WAIT_OPTION = {
  key: "batchWaitMs",
  flag: "--batch-wait",
  arg: "<duration>",
  kind: "duration",
  shownDefault: "1s",
  help: "actions: send a batch that is not full once its first event has waited this long",
} as const satisfies OptionSpec;

export type ActionsFlags = OptionsOf<typeof ACTIONS_OPTIONS> & OptionsOf<readonly [typeof BATCH_WAIT_OPTION]>;
