import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/**
 * How to run webhook-cli where this run happened, for a hint to print (demo's "Next:"): `npx
 * webhook-cli` under npm (`npm run demo` in a clone, `npx webhook-cli` in a project), where
 * `webhook-cli` alone would not be found; `webhook-cli` when the shell finds it on PATH (a global
 * install); else `npx webhook-cli`, which finds the package in the project or clone it runs in.
 */
export function invocation(env: NodeJS.ProcessEnv): string {
  // npm puts the project's node_modules/.bin on PATH for what it runs; the user's shell does not have it.
  if (env["npm_command"] !== undefined || env["npm_lifecycle_event"] !== undefined) return "npx webhook-cli";
  return onPath("webhook-cli", env["PATH"]) ? "webhook-cli" : "npx webhook-cli";
}

function onPath(name: string, path: string | undefined): boolean {
  const names = process.platform === "win32" ? [`${name}.cmd`, `${name}.exe`] : [name];
  for (const dir of (path ?? "").split(delimiter)) {
    if (dir === "") continue;
    for (const candidate of names) {
      try {
        accessSync(join(dir, candidate), constants.X_OK);
        return true;
      } catch {}
    }
  }
  return false;
}
