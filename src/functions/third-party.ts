import { createRequire } from "node:module";
import { join } from "node:path";
import { ConfigError } from "../errors.js";

/**
 * The globals the service's runtime provides from npm packages and Node's modules, under the
 * names its docs give (docs/functions.md#third-party-globals). webhook-cli ships none of the
 * packages: each is taken from the user's project when installed there, on first use.
 */
export interface ProvidedGlobal {
  /** The name the function uses: `_`, or a path `google.cloud.storage`. */
  name: string;
  /** The npm package, with the version the service has (when its docs say). */
  pkg?: string;
  version?: string;
  /** A Node.js module the service exposes itself (nothing to install). */
  builtin?: string;
}

const PROVIDED_GLOBALS: readonly ProvidedGlobal[] = [
  { name: "_", pkg: "lodash", version: "4.17.19" },
  { name: "AWS", pkg: "aws-sdk", version: "2.488.0" },
  { name: "FormData", pkg: "form-data", version: "2.4.0" },
  { name: "OAuth", pkg: "oauth", version: "0.9.15" },
  { name: "moment", pkg: "moment-timezone", version: "0.5.31" },
  { name: "jsonwebtoken", pkg: "jsonwebtoken", version: "8.5.1" },
  { name: "jsforce", pkg: "jsforce", version: "1.11.0" },
  { name: "stripe", pkg: "stripe", version: "8.115.0" },
  { name: "twilio", pkg: "twilio", version: "3.68.0" },
  { name: "xml", pkg: "xml", version: "1.0.1" },
  { name: "xml2js", pkg: "xml2js", version: "0.4.23" },
  { name: "fetchretrylib.fetchretry", pkg: "fetch-retry" },
  ...["automl@2.2.0", "bigquery@5.3.0", "datastore@6.2.0", "firestore@4.4.0", "functions@1.1.0", "pubsub@2.6.0", "storage@5.3.0", "tasks@2.6.0"].map(
    (entry) => {
      const [part, version] = entry.split("@") as [string, string];
      return { name: `google.cloud.${part}`, pkg: `@google-cloud/${part}`, version };
    },
  ),
  { name: "hubspotlib.hubspot", pkg: "@hubspot/api-client" },
  { name: "libphonenumberjslib.libphonenumberjs", pkg: "libphonenumber-js" },
  { name: "mailchimplib.mailchimp", pkg: "@mailchimp/mailchimp_marketing" },
  { name: "nodemailjet.nodemailjet", pkg: "node-mailjet" },
  { name: "sendgrid.client", pkg: "@sendgrid/client", version: "7.4.7" },
  { name: "sendgrid.mail", pkg: "@sendgrid/mail", version: "7.4.7" },
  { name: "skyflowlib.skyflow", pkg: "skyflow-node" },
  { name: "uuidv5.uuidv5", pkg: "uuidv5", version: "1.0.0" },
  { name: "winstonlib.winston", pkg: "winston", version: "2.4.6" },
  { name: "zlib.zlib", builtin: "node:zlib" },
  { name: "https", builtin: "node:https" },
];

/**
 * Installs each provided global on `target` (the function's globals) as a getter that loads its
 * module on first use, from the first of `dirs` where it is installed. One that is not installed
 * is a stand-in whose first use (a call, `new`, a property) throws a ConfigError naming the
 * package to install, not a ReferenceError. (A getter on a context's global cannot throw: the
 * vm's lookup swallows it into "is not defined".) A function may assign the name
 * (`zlib = zlib.zlib`, as the service's docs do): the value then replaces the getter.
 */
export function installProvidedGlobals(target: Record<string, unknown>, dirs: readonly string[]): void {
  const requires = dirs.map((dir) => createRequire(join(dir, "__function__.js")));
  for (const provided of PROVIDED_GLOBALS) {
    const path = provided.name.split(".");
    let holder = target;
    for (const part of path.slice(0, -1)) {
      if (!Object.hasOwn(holder, part)) holder[part] = {};
      holder = holder[part] as Record<string, unknown>;
    }
    lazy(holder, path[path.length - 1] as string, () => {
      try {
        return load(provided, requires, dirs);
      } catch (error) {
        return unusable(error as ConfigError);
      }
    });
  }
}

function lazy(holder: Record<string, unknown>, name: string, get: () => unknown): void {
  const settle = (value: unknown): void => {
    Object.defineProperty(holder, name, { value, writable: true, enumerable: true, configurable: true });
  };
  Object.defineProperty(holder, name, {
    get() {
      const value = get();
      settle(value);
      return value;
    },
    set: settle,
    enumerable: true,
    configurable: true,
  });
}

/** Throws `error` at any use: a call, `new`, reading or writing a property. `typeof` says "function" and throws nothing. */
function unusable(error: ConfigError): unknown {
  const fail = (): never => {
    throw error;
  };
  return new Proxy(function notInstalled() {}, { apply: fail, construct: fail, get: fail, set: fail, has: fail, ownKeys: fail, getPrototypeOf: fail });
}

function load(provided: ProvidedGlobal, requires: readonly NodeJS.Require[], dirs: readonly string[]): unknown {
  if (provided.builtin !== undefined) return (requires[0] ?? createRequire(import.meta.url))(provided.builtin);
  const pkg = provided.pkg as string;
  for (const require of requires) {
    try {
      return require(pkg);
    } catch (error) {
      if (!isNotFound(error, pkg)) throw new ConfigError(`\`${provided.name}\` (${pkg}) failed to load: ${(error as Error).message}`);
    }
  }
  const version = provided.version !== undefined ? ` ${provided.version}` : "";
  const spec = provided.version !== undefined ? `${pkg}@${provided.version}` : pkg;
  throw new ConfigError(
    `\`${provided.name}\` is ${pkg}${version} in the service's runtime, and it is not installed here ` +
      `(looked from ${[...new Set(dirs)].join(" and ")}): npm install --save-dev ${spec}`,
  );
}

/** The package itself is missing (not one of its own dependencies). */
function isNotFound(error: unknown, pkg: string): boolean {
  const { code, message } = error as NodeJS.ErrnoException;
  return code === "MODULE_NOT_FOUND" && typeof message === "string" && message.includes(`'${pkg}'`);
}
