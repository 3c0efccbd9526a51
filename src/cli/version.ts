import { createRequire } from "node:module";

/** The package's version (package.json, two levels up from src/cli/ and from the bundle in dist/cli/). */
export const VERSION: string = (createRequire(import.meta.url)("../../package.json") as { version: string }).version;
