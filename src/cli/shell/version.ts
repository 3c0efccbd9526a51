import { packageJson } from "../../util/shipped-file.js";

/** The package's version (package.json). */
export const VERSION: string = packageJson().version;
