import type { Page } from "playwright-core";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserAvailability, type Browser } from "../helpers/browser.js";
import { openInspector } from "../helpers/inspector-page.js";
import type { InProcessRun } from "../helpers/run-cli.js";

// What the page shows when listen's memory bounds act: rows dropped past --ui-history-mb, and a
// body whose pretty form would be too large. (inspector-browser.test.ts fails in CI without Chromium.)
const { path: chromiumPath } = browserAvailability();

describe.skipIf(chromiumPath === undefined)("the inspector page and listen's memory bounds (headless Chromium)", () => {
  let listen: InProcessRun;
  let receiverUrl: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    ({ listen, receiverUrl, browser, page } = await openInspector(chromiumPath, ["--ui-history-mb", "1"]));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    listen?.stop("SIGTERM");
    await listen?.code;
  });

  const rows = () => page.locator("#rows tr");
  const post = async (body: string): Promise<void> => {
    const response = await request(`${receiverUrl}/hook`, { method: "POST", headers: { "content-type": "application/json" }, body });
    await response.body.dump();
  };

  it("a body nested too deep to pretty-print is shown raw, with the reason", async () => {
    const nested = `${'{"a":'.repeat(499)}[${Array(200_000).fill("0").join(",")}]${"}".repeat(499)}`;
    await post(nested);
    await expect.poll(() => rows().count()).toBe(1);
    await rows().first().click();
    const note = page.locator("#body-note");
    await expect.poll(() => note.textContent()).toMatch(/^not pretty-printed: its pretty form would be over 4 MB/);
    expect(await page.locator("#body-raw").isVisible()).toBe(true);
    expect(await page.locator("#body-pretty").isVisible()).toBe(false);
    expect((await page.locator("#body-raw").textContent())?.length).toBe(nested.length);
  });

  it("drops the rows listen dropped past --ui-history-mb and says why", async () => {
    const big = JSON.stringify({ type: "track", userId: "big", event: "E", properties: { pad: "x".repeat(600 * 1024) } });
    await post(big);
    await post(big);
    // Two rows of 0.6 MB are over 1 MB, with or without the first one's 0.4 MB: only the newest stays.
    const note = page.locator("#history-note");
    await expect.poll(() => note.textContent()).toBe("oldest rows dropped: history over 1 MB (--ui-history-mb) (2 so far)");
    await expect.poll(() => rows().count()).toBe(1);
    // The notice and the rows arrive as separate events: the one row left becomes #3 once both are in.
    await expect.poll(() => rows().first().locator("td").first().textContent()).toBe("3");
    listen.stop("SIGTERM");
    expect((await listen.done).stderr).toContain("warning: inspector: oldest rows dropped: history over 1 MB (--ui-history-mb)");
  });
});
