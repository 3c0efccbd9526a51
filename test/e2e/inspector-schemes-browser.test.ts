import type { Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserAvailability, type Browser } from "../helpers/browser.js";
import { startServer, type TestServer } from "../helpers/http-server.js";
import { openInspector } from "../helpers/inspector-page.js";
import type { InProcessRun } from "../helpers/run-cli.js";
import { ANY_SCHEME_SECRET, ownerSigned } from "../helpers/scheme-judges.js";

// `listen --ui --scheme standard` in headless Chromium: the page names the scheme, and Resend and
// edit-then-resend sign again by it (a fresh timestamp under the row's webhook-id), judged by standardwebhooks.
const { path: chromiumPath } = browserAvailability();
const BODY = Buffer.from(JSON.stringify({ version: 1, type: "track", userId: "std-user", event: "Order Completed", timestamp: "2024-01-01T00:00:00.000Z" }));
// 200 s old when it arrives: verified then, and a copy of it sent again would be stale within two minutes.
const SIGNED_AT = Math.floor(Date.now() / 1000) - 200;

describe.skipIf(chromiumPath === undefined)("the inspector's Resend by scheme, in Chromium", () => {
  let listen: InProcessRun;
  let receiverUrl: string;
  let browser: Browser;
  let page: Page;
  let app: TestServer;
  let sentHeaders: Record<string, string>;

  beforeAll(async () => {
    app = await startServer();
    ({ listen, receiverUrl, browser, page } = await openInspector(chromiumPath, ["--scheme", "standard", "--secret", ANY_SCHEME_SECRET]));
    sentHeaders = await ownerSigned("standard", ANY_SCHEME_SECRET, BODY, { timestamp: SIGNED_AT });
    const answer = await fetch(`${receiverUrl}/hooks`, { method: "POST", headers: { "content-type": "application/json", ...sentHeaders }, body: BODY });
    expect(answer.status).toBe(200);
    await page.locator("#rows tr").first().waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    listen?.stop("SIGTERM");
    await listen?.code;
    await app?.close();
  });

  const rows = () => page.locator("#rows tr");

  it("names the scheme in the list and in the detail pane, with the skew", async () => {
    expect(await rows().first().locator("td").allTextContents()).toEqual(expect.arrayContaining(["ok · standard"]));
    await rows().first().click();
    await expect.poll(() => page.locator("#signature-ok").textContent()).toMatch(/^standard: webhook-signature matches the body \(timestamp 2\d\d s old\)$/);
  });

  it("Resend to listen itself arrives verified: the same webhook-id, a fresh timestamp", async () => {
    await page.locator("#resend").click();
    // R1 (the resend's own row) and #2 (what listen received from it).
    await expect.poll(() => rows().count()).toBe(3);
    const received = (await (await fetch(`${page.url().replace(/\/$/, "")}/api/requests/2`)).json()) as {
      signature: string;
      scheme: string;
      headers: Record<string, string>;
    };
    expect(received).toMatchObject({ signature: "ok", scheme: "standard" });
    expect(received.headers["webhook-id"]).toBe(sentHeaders["webhook-id"]);
    expect(Number(received.headers["webhook-timestamp"])).toBeGreaterThanOrEqual(SIGNED_AT + 200);
    await expect.poll(() => page.locator("#action-note").textContent()).toContain("Resent as #R1 → 200");
  });

  it("edit-then-resend to another URL signs the edited bytes; standardwebhooks verifies them", async () => {
    await rows().filter({ hasText: "std-user" }).last().click();
    await expect.poll(() => page.locator("#detail h2").textContent()).toContain("std-user");
    await page.locator("#edit").click();
    const edited = BODY.toString().replace("Order Completed", "Order Refunded");
    await page.fill("#edit-body", edited);
    await page.fill("#resend-url", `${app.url}/webhook`);
    await page.locator("#send-edited").click();
    await expect.poll(() => app.requests.length).toBe(1);
    const [delivered] = app.requests;
    expect(delivered?.body.toString()).toBe(edited);
    expect(delivered?.headers["webhook-id"]).toBe(sentHeaders["webhook-id"]);
    const headers = Object.fromEntries(Object.entries(delivered?.headers ?? {}).map(([name, value]) => [name, String(value)]));
    expect(() => new Webhook(ANY_SCHEME_SECRET).verify(edited, headers)).not.toThrow();
  });
});
