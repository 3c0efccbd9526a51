import { createHash, X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserAvailability, launchChromium, type Browser } from "../helpers/browser.js";
import { collect, spawnCli, waitForLine } from "../helpers/cli.js";
import { generateCertificates } from "../helpers/tls.js";

/**
 * The real analytics.js (@segment/analytics-next, bundled here with esbuild,
 * nothing from a CDN) on a page of another origin in Chromium, pointed at
 * `serve` by its one line (`cdnURL`). Requests really go from the page to
 * serve (no playwright route(): it would answer the CORS preflights itself and
 * hide the bug). Each call reaches a `listen` behind serve exactly once, in
 * standard and batching mode, with 1.84+ (preflights) and 1.83.0 (none).
 * 1.83.0's batching mode hard-codes https://, so it posts to a serve with
 * --tls-cert, whose certificate this Chromium trusts (by its key's hash).
 */

const { path: chromiumPath, skip } = browserAvailability();
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WRITE_KEY = "wk_browser";

describe.runIf(!skip && chromiumPath === undefined)("browser tests in CI", () => {
  it("find Chromium to drive", () => {
    expect.fail("CI=true and no Chromium found: .ci/run installs it with `apt-get install -y chromium` (or set CHROMIUM_PATH)");
  });
});

/** analytics.js as a page would load it: one script defining window.AnalyticsBrowser. */
async function bundle(packageName: string): Promise<string> {
  const result = await build({
    stdin: { contents: `import { AnalyticsBrowser } from "${packageName}"; window.AnalyticsBrowser = AnalyticsBrowser;`, resolveDir: ROOT, loader: "js" },
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2020",
    write: false,
    logLevel: "silent",
  });
  return result.outputFiles[0]?.text ?? "";
}

/** The page's own origin: an HTML page and the bundled library, nothing else. */
async function startPageServer(scripts: Record<string, string>): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const name = (req.url ?? "/").slice(1);
    const script = scripts[name];
    if (script !== undefined) return void res.writeHead(200, { "content-type": "text/javascript" }).end(script);
    // No icon: a 404 here would be a console error on the page.
    if (req.url === "/favicon.ico") return void res.writeHead(204).end();
    if (req.url === "/" || req.url?.startsWith("/?"))
      return void res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>shop</title><p>shop</p>");
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe.skipIf(chromiumPath === undefined)("analytics.js in Chromium, through serve, to listen", { tags: ["smoke"] }, () => {
  const dir = mkdtempSync(join(tmpdir(), "webhook-cli-analytics-browser-"));
  const recording = join(dir, "received.ndjson");
  const children: ReturnType<typeof spawnCli>[] = [];
  let serveUrl: string;
  let tlsServeUrl: string;
  let certsDir: string | undefined;
  let pages: { url: string; server: Server };
  let browser: Browser;

  beforeAll(async () => {
    const [current, old] = await Promise.all([bundle("@segment/analytics-next"), bundle("analytics-next-183")]);
    pages = await startPageServer({ "analytics-current.js": current, "analytics-183.js": old });
    const listen = spawnCli(["listen", "--port", "0", "--secret", "s3cret", "--record", recording]);
    children.push(listen);
    void collect(listen, 600_000).catch(() => {});
    const [, listenUrl] = await waitForLine(listen, /Listening on (http\S+)/, 15_000);
    const serve = spawnCli(["serve", "--port", "0", "--memory", "--write-key", WRITE_KEY, "--url", `${listenUrl}/hook`, "--secret", "s3cret"]);
    children.push(serve);
    void collect(serve, 600_000).catch(() => {});
    serveUrl = (await waitForLine(serve, /Listening on (http\S+)/, 15_000))[1] as string;
    const certs = generateCertificates();
    certsDir = certs.dir;
    const tlsServe = spawnCli([
      ...["serve", "--port", "0", "--memory", "--write-key", WRITE_KEY, "--url", `${listenUrl}/hook`, "--secret", "s3cret"],
      ...["--tls-cert", certs.certPath, "--tls-key", certs.keyPath],
    ]);
    children.push(tlsServe);
    void collect(tlsServe, 600_000).catch(() => {});
    tlsServeUrl = (await waitForLine(tlsServe, /Listening on (https\S+)/, 15_000))[1] as string;
    // What a developer does with mkcert's CA, for this one certificate: Chromium trusts its key.
    const spki = new X509Certificate(certs.cert).publicKey.export({ type: "spki", format: "der" });
    browser = await launchChromium(chromiumPath, [`--ignore-certificate-errors-spki-list=${createHash("sha256").update(spki).digest("base64")}`]);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    for (const child of children) child.kill("SIGTERM");
    await new Promise<void>((resolve) => (pages ? pages.server.close(() => resolve()) : resolve()));
    rmSync(dir, { recursive: true, force: true });
    if (certsDir) rmSync(certsDir, { recursive: true, force: true });
  });

  const received = (): string[] => {
    let text = "";
    try {
      text = readFileSync(recording, "utf8");
    } catch {}
    return text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => (JSON.parse(line) as { body: { messageId: string } }).body.messageId);
  };

  /** Loads the library on a fresh page, makes the five calls, returns their messageIds and what the page saw. */
  async function runPage(
    script: string,
    batching: boolean,
    cdnURL: string,
  ): Promise<{ ids: string[]; offsite: string[]; errors: string[]; failed: string[]; page: Page }> {
    const page = await browser.context.newPage();
    const offsite: string[] = [];
    const errors: string[] = [];
    // An answer the page may not read (no Access-Control-Allow-Origin) fails the request in the page: the library sends it again.
    const failed: string[] = [];
    page.on("requestfailed", (request) => failed.push(`${request.method()} ${request.url()}: ${request.failure()?.errorText}`));
    page.on("request", (request) => {
      if (new URL(request.url()).hostname !== "127.0.0.1") offsite.push(request.url());
    });
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(pages.url);
    await page.addScriptTag({ url: `/${script}` });
    const ids = await page.evaluate(
      async ({ writeKey, cdnURL, batching }) => {
        const integrations = batching ? { "Segment.io": { deliveryStrategy: { strategy: "batching", config: { size: 5, timeout: 300 } } } } : {};
        type Call = (...args: unknown[]) => Promise<{ event: { messageId: string } }>;
        type Analytics = { identify: Call; track: Call; page: Call; group: Call; alias: Call };
        const { AnalyticsBrowser } = globalThis as unknown as { AnalyticsBrowser: { load: (...args: unknown[]) => Analytics } };
        const analytics = AnalyticsBrowser.load({ writeKey, cdnURL }, { integrations });
        const contexts = await Promise.all([
          analytics.identify("user-1", { plan: "pro" }),
          analytics.track("Item Viewed", { sku: "A-1" }),
          analytics.page("Shop", "Home"),
          analytics.group("group-1", { name: "Team" }),
          analytics.alias("user-1", "anon-1"),
        ]);
        return contexts.map((context) => context.event.messageId);
      },
      { writeKey: WRITE_KEY, cdnURL, batching },
    );
    return { ids, offsite, errors, failed, page };
  }

  it.each([
    ["analytics-current.js", "standard", "http"],
    ["analytics-current.js", "batching", "http"],
    ["analytics-183.js", "standard", "http"],
    ["analytics-183.js", "batching", "https"],
  ] as const)(
    "%s in %s mode (serve over %s): identify, track, page, group and alias each reach listen exactly once; nothing leaves 127.0.0.1; no console error",
    async (script, mode, scheme) => {
      const { ids, offsite, errors, failed, page } = await runPage(script, mode === "batching", scheme === "https" ? tlsServeUrl : serveUrl);
      expect(ids).toHaveLength(5);
      expect(new Set(ids).size).toBe(5);
      await expect.poll(() => ids.filter((id) => received().includes(id)).length, { timeout: 15_000 }).toBe(5);
      await page.close();
      expect(failed).toEqual([]);
      const all = received();
      for (const id of ids)
        expect(
          all.filter((seen) => seen === id),
          id,
        ).toHaveLength(1);
      expect(offsite).toEqual([]);
      expect(errors).toEqual([]);
    },
    60_000,
  );
});
