import { execFile, spawnSync } from "node:child_process";

/** Each shell a copied command is pasted into, with the switches that keep the user's config out. */
export const SHELLS: Record<string, string[]> = {
  bash: ["--noprofile", "--norc", "-c"],
  zsh: ["-f", "-c"],
  fish: ["--no-config", "-c"],
};

const INSTALL_HINT = "install them with `sudo apt-get install bash zsh fish curl` (.ci/run does in CI)";
const inCi = (): boolean => ["true", "1"].includes((process.env["CI"] ?? "").toLowerCase());
const installed = (tool: string): boolean => spawnSync(tool, ["--version"], { stdio: "ignore" }).status === 0;

/**
 * Which of the shells and curl are missing, and whether the tests that need them skip: in CI a
 * missing tool is a failure (CI installs them); on a developer machine they skip with a notice.
 */
export function shellAvailability(): { missing: string[]; skip: boolean } {
  const missing = [...Object.keys(SHELLS), "curl", "base64"].filter((tool) => !installed(tool));
  if (missing.length === 0 || inCi()) return { missing, skip: false };
  console.warn(`curl command tests skipped: ${missing.join(", ")} not found; ${INSTALL_HINT}`);
  return { missing, skip: true };
}

/** Runs `command` with `shell -c`; rejects with the shell's stderr when it exits non-zero. */
export function runInShell(shell: string, command: string, env: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(shell, [...(SHELLS[shell] ?? ["-c"]), command], { env, timeout: 10_000, maxBuffer: 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${shell} -c failed (${error.code ?? error.signal}): ${stderr}`));
      else resolve({ stdout, stderr });
    });
  });
}

export const MISSING_TOOLS_MESSAGE = `CI=true and a tool is missing: ${INSTALL_HINT}`;
