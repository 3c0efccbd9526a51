import type { OptionsOf, OptionSpec } from "./spec.js";

/**
 * A destination function where a command takes a URL (docs/functions.md#as-a-destination): send,
 * replay, serve and demo. `--batch-size` (the Actions table) sets the events per `onBatch` call.
 */
export const FUNCTION_OPTIONS = [
  {
    key: "function",
    flag: "--function",
    arg: "<file>",
    kind: "string",
    nonEmpty: true,
    help: "deliver to this destination function (onTrack, onIdentify, … or onBatch) instead of a URL, run as the service runs it",
  },
  {
    key: "settings",
    flag: "--settings",
    arg: "<file|json>",
    kind: "string",
    help: "the function's settings: a JSON object, or a file holding one",
  },
  {
    key: "egress",
    flag: "--function-egress",
    arg: "<url>",
    kind: "string",
    nonEmpty: true,
    help: "send every request the function makes to this URL instead (the URL it asked for in X-Function-Fetch-Url; signed with the secret when one is set)",
  },
] as const satisfies readonly OptionSpec[];

export type FunctionFlags = OptionsOf<typeof FUNCTION_OPTIONS>;

/**
 * serve's functions (docs/serve-api.md#source-functions): `--source-function [NAME=]FILE` answers
 * `POST /functions/NAME`; its `--settings` is repeatable, `NAME=` naming the source function a
 * value is for (one without a name is the destination function's, and any other's).
 */
export const SERVE_FUNCTION_OPTIONS = [
  FUNCTION_OPTIONS[0],
  {
    key: "settings",
    flag: "--settings",
    arg: "<[name=]file|json>",
    kind: "list",
    help: "a function's settings: a JSON object, or a file holding one; NAME= for the source function of that name (repeatable)",
  },
  FUNCTION_OPTIONS[2],
  {
    key: "sourceFunctions",
    flag: "--source-function",
    arg: "<[name=]file>",
    kind: "list",
    help: "run this source function (onRequest) on every webhook POSTed to /functions/NAME (NAME: the file's name without .js unless given; repeatable)",
  },
] as const satisfies readonly OptionSpec[];
