import { createHmac } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserAvailability, launchChromium, type Browser } from "../helpers/browser.js";
import { startInProcess, type InProcessRun } from "../helpers/run-cli.js";
import { tempDir } from "../helpers/setup.js";

// The inspector's detail names the --responses rule that answered (docs/receiver.md#scripted-answers).
const SECRET = "rule-secret";
const { path: chromiumPath } = browserAvailability();
const { dir } = tempDir("webhook-cli-rule-browser-");
const message = (type: string, fields: Record<string, unknown>) =>
  JSON.stringify({ version: 1, type, userId: "u1", timestamp: "2024-01-01T00:00:00.000Z", ...fields });

describe.skipIf(chromiumPath === undefined)("the inspector shows which rule answered", () => {
  let listen: InProcessRun;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    writeFileSync(join(dir, "rules.json"), JSON.stringify([{ match: { type: "track" }, respond: { status: 201, body: "queued" } }]));
    listen = startInProcess(["listen", "--port", "0", "--ui", "--ui-port", "0", "--secret", SECRET, "--responses", "rules.json"], { cwd: dir });
    const [, receiver, inspector] = await listen.waitFor(/Listening on (\S+)[\s\S]*Inspector: (\S+)/, 15_000);
    for (const body of [message("track", { event: "Order Completed", properties: {} }), message("identify", { traits: {} })]) {
      const response = await fetch(`${receiver}/hooks`, {
        method: "POST",
        body,
        headers: { "x-signature": createHmac("sha1", SECRET).update(body).digest("hex") },
      });
      await response.text();
    }
    browser = await launchChromium(chromiumPath);
    page = await browser.context.newPage();
    await page.goto(inspector as string);
    await page.locator("#rows tr").nth(1).waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    listen?.stop("SIGTERM");
    await listen?.code;
  });

  it("a row a rule answered says so in its detail; another does not", async () => {
    const rows = page.locator("#rows tr");
    await rows.nth(1).click();
    await expect.poll(() => page.locator("#detail h2").textContent()).toContain("track");
    expect(await page.locator("#answered-by-rule").textContent({ timeout: 2000 })).toBe("answered by rule 0 (--responses): 201");
    await rows.nth(0).click();
    await expect.poll(() => page.locator("#detail h2").textContent()).toContain("identify");
    expect(await page.locator("#answered-by-rule").count()).toBe(0);
  });
});
