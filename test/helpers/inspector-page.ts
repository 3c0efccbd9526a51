import type { Page } from "playwright-core";
import { launchChromium, type Browser } from "./browser.js";
import { startInProcess, type InProcessOptions, type InProcessRun } from "./run-cli.js";

export interface OpenInspector {
  listen: InProcessRun;
  receiverUrl: string;
  browser: Browser;
  page: Page;
}

/**
 * `listen --ui` started in process with `args` after its port flags, and headless Chromium on its
 * page once the page says it is live. If anything fails on the way, listen is stopped again.
 */
export async function openInspector(chromiumPath: string | undefined, args: readonly string[], options: InProcessOptions = {}): Promise<OpenInspector> {
  const listen = startInProcess(["listen", "--port", "0", "--ui", "--ui-port", "0", ...args], options);
  let browser: Browser | undefined;
  try {
    const [, receiver, inspector] = await listen.waitFor(/Listening on (\S+)[\s\S]*Inspector: (\S+)/, 15_000);
    browser = await launchChromium(chromiumPath);
    const page = await browser.context.newPage();
    await page.goto(inspector as string);
    await page.locator("#live", { hasText: "live" }).waitFor();
    return { listen, receiverUrl: receiver as string, browser, page };
  } catch (error) {
    await browser?.close();
    listen.stop("SIGTERM");
    await listen.code;
    throw error;
  }
}
