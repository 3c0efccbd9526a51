import * as module from "node:module";

/**
 * Installs a resolve hook for the whole process: on its own thread with module.registerHooks
 * (Node.js 22.15, 23.5 and later), else with module.register (22.13 and 22.14), which runs it on a
 * hooks thread and is deprecated from Node.js 26 (DEP0205, a warning on stderr). `resolve` must
 * work with either `next`: registerHooks' returns the result, register's a promise of it.
 */
export function installResolveHook(resolve, hooksModule) {
  if (typeof module.registerHooks === "function") module.registerHooks({ resolve });
  else module.register(hooksModule);
}
