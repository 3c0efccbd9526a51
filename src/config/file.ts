import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { ConfigError } from "../errors.js";
import { parseUntrustedJson } from "../json/parse.js";
import { SCHEME_NAMES } from "../signing/schemes.js";
import { MAX_SETTINGS_FILE_BYTES, readRegularFile } from "../util/readable-file.js";

/** The config file (docs/cli.md#config-file): read, validated with zod, named in every error with the key at fault. */

const DEFAULT_CONFIG_FILE = "webhook-cli.json";

// Each webhook is its own mapping under Webhooks (Actions): method, data and batchSize (docs/actions.md#settings).
const webhookSchema = z.strictObject({
  // A URL, or a destination function (docs/functions.md#as-a-destination) with its settings (an object, or a file).
  url: z.string().optional(),
  function: z.string().min(1).optional(),
  settings: z.union([z.string().min(1), z.record(z.string(), z.unknown())]).optional(),
  headers: z.record(z.string(), z.string()).optional(),
  // This URL's signature scheme (docs/schemes.md); --scheme names every URL's.
  scheme: z.enum(SCHEME_NAMES).optional(),
  method: z.enum(["POST", "PUT", "PATCH"]).optional(),
  // A path, JSON text or an object: checked against the supported subset where the settings resolve.
  data: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
  batchSize: z.int().min(1).max(4000).optional(),
});

const configSchema = z.strictObject({
  sharedSecret: z.string().min(1, { error: "the secret is empty" }).optional(),
  destination: z.enum(["classic", "actions"]).optional(),
  webhooks: z.array(webhookSchema).optional(),
  // A duration such as "1s", read where the settings resolve.
  batchWait: z.string().optional(),
  userAgent: z.string().min(1).optional(),
  aliasKeys: z.enum(["spec", "camel"]).optional(),
  enabled: z.boolean().optional(),
  sources: z.array(z.strictObject({ name: z.string().min(1), writeKey: z.string().min(1) })).optional(),
});
export type ConfigFile = z.infer<typeof configSchema>;

/** Reads and validates a config file; errors name the file and the key, and `--config` when it was given. */
export function loadConfig(path: string, given: boolean): ConfigFile {
  const text = readRegularFile(path, given ? { field: "config", file: path } : { file: path }, MAX_SETTINGS_FILE_BYTES).toString("utf8");
  let json: unknown;
  try {
    json = parseUntrustedJson(text.replace(/^\uFEFF/, ""));
  } catch (error) {
    throw new ConfigError(`not valid JSON: ${(error as Error).message}`, { file: path });
  }
  const result = configSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    const key = issue
      ? issue.path
          .map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`))
          .join("")
          .replace(/^\./, "")
      : "";
    throw new ConfigError(issue?.message ?? "invalid config", { file: path, ...(key ? { key } : {}) });
  }
  return result.data;
}

/** `./webhook-cli.json` when it exists in `cwd`, else undefined (no config file). */
export function defaultConfigPath(cwd: string): string | undefined {
  return existsSync(resolve(cwd, DEFAULT_CONFIG_FILE)) ? DEFAULT_CONFIG_FILE : undefined;
}
