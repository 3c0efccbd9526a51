import { z } from "zod";
import { UsageError } from "../../errors.js";
import type { MessageType } from "../../messages/schemas.js";
import { parseScript } from "../../receiver/faults.js";
import { aliasKeys, duration, durationOrZero, httpStatus, integer, isoDate, jsonObject, messageType, number } from "../options.js";
import { attributeOf, type OptionsOf, type OptionSpec, type OptionTable } from "./spec.js";

/** zod schema of one option's raw commander value; its transforms throw UsageError naming the flag. */
function schemaOf(spec: OptionSpec): z.ZodType {
  const { flag } = spec;
  switch (spec.kind) {
    case "string":
      return spec.nonEmpty ? z.string().min(1) : z.string();
    case "switch":
      return z.boolean();
    case "list":
      return z.array(z.string());
    case "duration":
      return duration(flag);
    case "durationOrZero":
      return durationOrZero(flag);
    case "integer":
      return integer(flag, spec.min ?? Number.MIN_SAFE_INTEGER, spec.max);
    case "number":
      return number(flag, spec.min ?? -Number.MAX_VALUE, spec.max ?? Number.MAX_VALUE);
    case "status":
      return httpStatus(flag);
    case "jsonObject":
      return jsonObject(flag);
    case "date":
      return isoDate(flag);
    case "messageType":
      return messageType(flag);
    case "messageTypes":
      return z.array(messageType(flag));
    case "aliasKeys":
      return aliasKeys;
    case "script":
      return z.string().transform((text) => parseScript(text));
  }
}

/**
 * Parses commander's raw option bag against a table, in table order: the
 * typed options, with absent options left out (a `default: false` switch is
 * false). A bad value is a UsageError naming its flag.
 */
export function parseTable<T extends OptionTable>(table: T, raw: Readonly<Record<string, unknown>>): OptionsOf<T> {
  const options: Record<string, unknown> = {};
  for (const spec of table) {
    const value = raw[attributeOf(spec.flag)];
    if (value === undefined) {
      if (spec.default === false) options[spec.key] = false;
      continue;
    }
    const result = schemaOf(spec).safeParse(value);
    if (!result.success) throw new UsageError(result.error.issues[0]?.message ?? "invalid value", { flag: spec.flag });
    options[spec.key] = result.data;
  }
  return options as OptionsOf<T>;
}

/** Message types given as arguments (`generate track identify`): an error names the value, not commander's `[types...]`. */
export function parseMessageTypes(values: readonly string[]): MessageType[] {
  return values.map((value) => messageType(undefined).parse(value));
}
