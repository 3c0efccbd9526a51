import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome", "/usr/bin/google-chrome-stable"];
const INSTALL_HINT = "install it with `sudo apt-get install chromium` (or set CHROMIUM_PATH)";

/** Debian's chromium (or CHROMIUM_PATH): the browser tests never download one. */
export function findChromium(): string | undefined {
  const given = process.env["CHROMIUM_PATH"];
  if (given) return existsSync(given) ? given : undefined;
  return CANDIDATES.find((path) => existsSync(path));
}

const inCi = (): boolean => ["true", "1"].includes((process.env["CI"] ?? "").toLowerCase());

/**
 * Whether the browser tests run. In CI a missing browser is a failure (CI
 * installs it); on a developer machine the tests skip with a one-line notice.
 */
export function browserAvailability(): { path: string | undefined; skip: boolean } {
  const path = findChromium();
  if (path) return { path, skip: false };
  if (inCi()) return { path: undefined, skip: false };
  console.warn(`browser tests skipped: no Chromium found; ${INSTALL_HINT}`);
  return { path: undefined, skip: true };
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile, no network of its own (no sync, updates or QUIC). */
export async function launchChromium(path: string | undefined, extraArgs: readonly string[] = []): Promise<Browser> {
  if (path === undefined) throw new Error(`CI=true and no Chromium found: ${INSTALL_HINT}; .ci/run installs it with apt-get`);
  const profile = mkdtempSync(join(tmpdir(), "webhook-cli-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: path,
    headless: true,
    acceptDownloads: true,
    viewport: { width: 1440, height: 900 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      ...extraArgs,
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
