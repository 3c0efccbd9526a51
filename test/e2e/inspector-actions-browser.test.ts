import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserAvailability, type Browser } from "../helpers/browser.js";
import { sendRaw } from "../helpers/hostile-requests.js";
import { openInspector } from "../helpers/inspector-page.js";
import type { InProcessRun } from "../helpers/run-cli.js";

const SECRET = "s3cr3t";
const hmac = (body: string | Buffer) => createHmac("sha1", SECRET).update(body).digest("hex");
const { path: chromiumPath } = browserAvailability();

// The real destination's batch (fixtures/actions/captured): three events' data, signed over element 0 only.
const captured = JSON.parse(readFileSync(new URL("../../fixtures/actions/captured/batch-default-signed.json", import.meta.url), "utf8")) as {
  requests: { headers: [string, string][]; body: { base64: string } }[];
};
const BATCH = Buffer.from(captured.requests[0]?.body.base64 ?? "", "base64");
const BATCH_SIGNATURE = captured.requests[0]?.headers.find(([name]) => name === "x-signature")?.[1] ?? "";

const track = { version: 2, type: "track", event: "Signed Up", userId: "classic-user", properties: {}, timestamp: "2026-01-02T03:04:05.678Z" };
// A batch with one broken message, an event without data and a mapped payload.
const MIXED_FIRST = JSON.stringify({ ...track, userId: "mixed-user" });
const MIXED = Buffer.from(`[${MIXED_FIRST},{"version":2,"type":"track","userId":"broken-user"},null,{"sku":"sku-9"}]`);

function request(method: string, port: number, body: Buffer, signature: string): Buffer {
  const head = [`${method} /hooks HTTP/1.1`, `Host: 127.0.0.1:${port}`, "Connection: close", "Content-Type: application/json", `X-Signature: ${signature}`];
  return Buffer.concat([Buffer.from(`${head.join("\r\n")}\r\nContent-Length: ${body.length}\r\n\r\n`), body]);
}

describe.skipIf(chromiumPath === undefined)("the inspector shows Webhooks (Actions) requests: method, batch and elements", () => {
  let listen: InProcessRun;
  let port: number;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    let receiverUrl: string;
    ({ listen, receiverUrl, browser, page } = await openInspector(chromiumPath, ["--secret", SECRET]));
    port = Number(new URL(receiverUrl).port);
    const body = Buffer.from(JSON.stringify(track));
    expect(await sendRaw(port, request("POST", port, body, hmac(body)))).toMatch(/^HTTP\/1\.1 200 /);
    expect(await sendRaw(port, request("PUT", port, BATCH, BATCH_SIGNATURE))).toMatch(/^HTTP\/1\.1 200 /);
    // Shape errors do not change the answer; the signature (over element 0) is good.
    expect(await sendRaw(port, request("PATCH", port, MIXED, hmac(MIXED_FIRST)))).toMatch(/^HTTP\/1\.1 200 /);
    await page.locator("#rows tr").nth(2).waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    listen?.stop("SIGTERM");
    await listen?.code;
  });

  const rows = () => page.locator("#rows tr");
  const cells = (row: ReturnType<typeof rows>) => row.locator("td").allTextContents();

  it("lists each request with its method and what its body is", async () => {
    expect(await cells(rows().nth(2))).toEqual(expect.arrayContaining(["POST", "/hooks", "track", "ok"]));
    expect(await cells(rows().nth(1))).toEqual(expect.arrayContaining(["PUT", "/hooks", "batch of 3", "ok", "ok", "200"]));
    expect(await cells(rows().nth(0))).toEqual(expect.arrayContaining(["PATCH", "/hooks", "batch of 4", "ok", "errors"]));
  });

  it("a PUT batch's detail shows its method, the element-0 signature rule and each element with its shape result", async () => {
    await rows().nth(1).click();
    const detail = page.locator("#detail");
    await expect.poll(() => detail.locator("h2").textContent()).toContain("batch of 3");
    expect(await detail.locator("p.sub").textContent()).toMatch(/^PUT \/hooks · /);
    expect(await page.locator("#signature-ok").textContent()).toContain("X-Signature matches element 0's bytes");
    const elements = page.locator("#elements tbody tr");
    expect(await elements.count()).toBe(3);
    const [first, second, third] = [await cells(elements.nth(0)), await cells(elements.nth(1)), await cells(elements.nth(2))];
    expect(first).toEqual(["0", "message signed", "track", "user_1 · Order Completed", "ok"]);
    expect(second).toEqual(["1", "message", "track", "user_2 · Product Viewed", "ok"]);
    expect(third?.slice(0, 3)).toEqual(["2", "message", "identify"]);
  });

  it("a batch's broken element, null element and mapped payload are each shown for what they are", async () => {
    await rows().nth(0).click();
    await expect.poll(() => page.locator("#detail h2").textContent()).toContain("batch of 4");
    expect(await page.locator("#detail p.sub").textContent()).toMatch(/^PATCH /);
    const elements = page.locator("#elements tbody tr");
    expect(await elements.count()).toBe(4);
    expect(await cells(elements.nth(0))).toEqual(["0", "message signed", "track", "mixed-user · Signed Up", "ok"]);
    const broken = await cells(elements.nth(1));
    expect(broken.slice(0, 4)).toEqual(["1", "message", "track", "broken-user"]);
    expect(broken[4]).toContain('missing required key "event"');
    expect(await cells(elements.nth(2))).toEqual(["2", "null (no data)", "–", "–", "ok"]);
    expect(await cells(elements.nth(3))).toEqual(["3", "payload", "–", "–", "ok"]);
  });

  it("filters by kind, method text and verdict", async () => {
    await page.selectOption("#filter-type", "batch");
    await expect.poll(() => rows().count()).toBe(2);
    await page.selectOption("#filter-type", "track");
    await expect.poll(() => rows().count()).toBe(1);
    await page.selectOption("#filter-type", "");
    // Polled on what the rows are, not only how many: the list is redrawn on the next frame.
    const methodsAndKinds = () => rows().evaluateAll((trs) => trs.map((tr) => `${tr.children[2]?.textContent} ${tr.children[4]?.textContent}`));
    await page.fill("#filter-text", "put");
    await expect.poll(methodsAndKinds).toEqual(["PUT batch of 3"]);
    await page.fill("#filter-text", "");
    // The list is drawn on the next frame: wait for it, or the PUT row still shown would pass for the next filter's one row.
    await expect.poll(() => rows().count()).toBe(3);
    await page.selectOption("#filter-verdict", "shape");
    await expect.poll(methodsAndKinds).toEqual(["PATCH batch of 4"]);
    await page.selectOption("#filter-verdict", "");
    await expect.poll(() => rows().count()).toBe(3);
  });
});
