import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { Agent, request } from "undici";
import { describe, expect, it } from "vitest";
import { BIN, collect, spawnCli, waitForLine, type CliResult } from "../helpers/cli.js";
import { nodeUnder, RSS_LIMIT_MB, watchRss, type RssWatch } from "../helpers/memory.js";
import { closeServersAfterEach, killChildrenAfterEach, tempDir } from "../helpers/setup.js";

// listen's memory with what a sender or a page chooses, measured from the outside (the RSS of the
// built CLI) with the sizes of the report that found each hole. Each test stops sending as soon as
// the RSS passes RSS_LIMIT_MB (1.5 times the documented ceiling): the watcher kills listen then.
// Measured on main before the bounds: --ui 1.0 GB after 36 bodies, --ui --forward-to 7 MiB answers
// +7 MB a row, a row opened 2.1 GB, 200 relayed 8 MiB answers 1.5 GB, a terminal 1.5 GB after 57.

const children = killChildrenAfterEach();
const { server } = closeServersAfterEach();
const files = tempDir("webhook-cli-e2e-memory-");
const MIB = 1024 * 1024;

/** 1 MiB of `[{},{},…]`: about 25 MB once parsed. */
const EMPTY_OBJECTS = `[${"{},".repeat(Math.floor((MIB - 2) / 3)).slice(0, -1)}]`;
/** 1 MiB nested 500 deep: about 500 MB pretty-printed. */
const NESTED = (() => {
  const open = `${'{"a":'.repeat(499)}[`;
  const close = `]${"}".repeat(499)}`;
  return `${open}${Array(Math.floor((MIB - open.length - close.length + 1) / 2))
    .fill("0")
    .join(",")}${close}`;
})();
/** 1 MiB that is cheap to parse: one long string. */
const LONG_STRING = JSON.stringify({ type: "track", userId: "u", event: "E", properties: { pad: "x".repeat(MIB - 100) } });

interface Started {
  child: ChildProcess;
  url: string;
  page: string | undefined;
  done: Promise<CliResult>;
  rss: RssWatch;
}

async function startListen(args: string[]): Promise<Started> {
  const child = spawnCli(["listen", "--port", "0", ...args]);
  children.push(child);
  const done = collect(child, 120_000);
  const [, url, page] = await waitForLine(child, args.includes("--ui") ? /Listening on (\S+)[\s\S]*Inspector: (\S+)/ : /Listening on (\S+)/, 15_000);
  return { child, url: url as string, page, done, rss: watchRss(child.pid as number) };
}

async function post(url: string, body: string, dispatcher?: Agent): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  const response = await request(`${url}/hook`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    ...(dispatcher ? { dispatcher } : {}),
  });
  return { status: response.statusCode, headers: response.headers, body: Buffer.from(await response.body.arrayBuffer()) };
}

/** Sends `bodies` one after another, stopping as soon as listen's RSS passes the limit. */
async function sendAll(started: Started, bodies: readonly string[]): Promise<number> {
  let sent = 0;
  for (const body of bodies) {
    if (started.rss.over) break;
    const answer = await post(started.url, body).catch(() => undefined);
    if (answer === undefined) break;
    sent += 1;
  }
  return sent;
}

async function stop(started: Started): Promise<CliResult> {
  started.rss.stop();
  if (started.child.exitCode === null && started.child.signalCode === null) started.child.kill("SIGTERM");
  return started.done;
}

describe("listen keeps within its documented memory ceiling", { tags: ["smoke"] }, () => {
  it("--ui: 1 MiB bodies of [{},…] and then plain 1 MiB bodies: history bounded in bytes, named when it drops rows", async () => {
    const listen = await startListen(["--ui", "--ui-port", "0"]);
    const sent = await sendAll(listen, [...Array(30).fill(EMPTY_OBJECTS), ...Array(110).fill(LONG_STRING)]);
    const peak = listen.rss.peak;
    console.log(`--ui: ${sent} bodies of 1 MiB, peak RSS ${Math.round(peak)} MB`);
    expect(listen.rss.over, `RSS passed ${RSS_LIMIT_MB} MB after ${sent} bodies`).toBe(false);
    expect(sent).toBe(140);

    // The oldest rows went, and both the page and the terminal say why.
    const gone = await request(`${listen.page}/api/requests/1`);
    expect(gone.statusCode).toBe(404);
    expect(((await gone.body.json()) as { error: string }).error).toBe(
      "request 1 is no longer kept: oldest rows dropped: history over 64 MB (--ui-history-mb)",
    );
    const newest = await request(`${listen.page}/api/requests/140`);
    expect(newest.statusCode).toBe(200);
    expect(((await newest.body.json()) as { bodyRaw: string }).bodyRaw).toBe(LONG_STRING);
    const result = await stop(listen);
    expect(result.stderr).toContain("warning: inspector: oldest rows dropped: history over 64 MB (--ui-history-mb)");
  }, 90_000);

  it("--ui --forward-to: the app's 7 MiB answers are kept as a digest, not whole", async () => {
    const answer = Buffer.alloc(7 * MIB, 0x61);
    const app = await server((_request, res) => void res.writeHead(200, { "content-type": "text/plain" }).end(answer));
    const listen = await startListen(["--ui", "--ui-port", "0", "--forward-to", app.url]);
    // 120 rows of 7 MiB answers would be 840 MB: past the limit if kept whole. Three senders at once
    // (21 MiB of answers: within the body budget) make it quicker.
    let sent = 0;
    const sender = async (): Promise<void> => {
      while (sent < 120 && !listen.rss.over) {
        sent += 1;
        const response = await request(`${listen.url}/hook`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: '{"type":"track","userId":"u","event":"E"}',
        });
        statuses.push(response.statusCode);
        lengths.add(Number(response.headers["content-length"]));
        await response.body.dump({ limit: answer.length });
      }
    };
    const statuses: number[] = [];
    const lengths = new Set<number>();
    // A listen killed past the limit resets the senders: the RSS check below says why.
    await Promise.all([sender(), sender(), sender()]).catch(() => {});
    console.log(`--ui --forward-to: ${sent} answers of 7 MiB, peak RSS ${Math.round(listen.rss.peak)} MB`);
    expect(listen.rss.over, `RSS passed ${RSS_LIMIT_MB} MB after ${sent} answers`).toBe(false);
    expect(new Set(statuses)).toEqual(new Set([200]));
    expect(lengths).toEqual(new Set([answer.length]));
    const shown = (await (await request(`${listen.page}/api/requests/${sent}`)).body.json()) as { response: Record<string, unknown> };
    expect(shown.response).toMatchObject({ status: 200, body: null, bodySize: answer.length, bodySha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    await stop(listen);
  }, 90_000);

  it("--ui: opening a 1 MiB body nested 500 deep gives it raw with a note, not a 500 MB pretty form", async () => {
    const listen = await startListen(["--ui", "--ui-port", "0"]);
    expect((await post(listen.url, NESTED)).status).toBe(200);
    const opened = await request(`${listen.page}/api/requests/1`).catch(() => undefined);
    const text = opened ? await opened.body.text().catch(() => "") : "";
    console.log(`opening a nested row: ${text.length} bytes, peak RSS ${Math.round(listen.rss.peak)} MB`);
    expect(listen.rss.over, `RSS passed ${RSS_LIMIT_MB} MB opening the row`).toBe(false);
    const detail = JSON.parse(text) as Record<string, unknown>;
    expect(detail["bodyPretty"]).toBeNull();
    expect(detail["bodyNote"]).toMatch(/^not pretty-printed: its pretty form would be over 4 MB/);
    expect(detail["bodyRaw"]).toBe(NESTED);
    expect(text.length).toBeLessThan(4 * MIB);
    await stop(listen);
  }, 60_000);

  it("--forward-to: 200 senders at once with 8 MiB answers stay within the body budget; the rest get 503 with Retry-After, never a reset", async () => {
    const answer = Buffer.alloc(8 * MIB, 0x62);
    const app = await server((_request, res) => void res.writeHead(200, { "content-type": "text/plain" }).end(answer));
    const recording = `${files.dir}/relayed.ndjson`;
    const listen = await startListen(["--forward-to", app.url, "--forward-timeout", "30s", "--record", recording]);
    const dispatcher = new Agent({ connections: 250 });
    const body = '{ "type": "track", "userId": "u", "event": "E" }';
    // Every sender leaves its answer unread until all 200 have one, as slow clients do: listen holds
    // what it relayed meanwhile.
    let answered = 0;
    let allAnswered = (): void => {};
    const barrier = new Promise<void>((resolve) => (allAnswered = resolve));
    // One give-up timer from the first answer, cleared with the barrier (no timers left behind).
    let giveUp: NodeJS.Timeout | undefined;
    void barrier.then(() => clearTimeout(giveUp));
    const arrived = (): Promise<void> => {
      giveUp ??= setTimeout(allAnswered, 20_000);
      if (++answered === 200) allAnswered();
      return barrier;
    };
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, async () => {
        try {
          const response = await request(`${listen.url}/hook`, { method: "POST", headers: { "content-type": "application/json" }, body, dispatcher });
          await arrived();
          const received = Buffer.from(await response.body.arrayBuffer());
          return { status: response.statusCode, retryAfter: response.headers["retry-after"], body: received };
        } catch (error) {
          void arrived();
          return { status: 0, error: (error as NodeJS.ErrnoException).code ?? String(error) };
        }
      }),
    );
    await dispatcher.close();
    const peak = listen.rss.peak;
    const relayed = outcomes.filter((o) => o.status === 200);
    const refused = outcomes.filter((o) => o.status === 503);
    console.log(`--forward-to: 200 senders, ${relayed.length} relayed, ${refused.length} refused, peak RSS ${Math.round(peak)} MB`);
    expect(listen.rss.over, `RSS passed ${RSS_LIMIT_MB} MB`).toBe(false);
    const others = outcomes.filter((o) => o.status !== 200 && o.status !== 503).map((o) => `${o.status} ${o.error ?? o.body?.toString().slice(0, 200) ?? ""}`);
    expect(others.slice(0, 3)).toEqual([]);
    expect(relayed.length).toBeGreaterThan(0);
    for (const ok of relayed) expect(ok.body?.equals(answer)).toBe(true);
    expect(refused.length).toBeGreaterThan(0);
    for (const no of refused) {
      expect(no.retryAfter).toBe("1");
      expect(JSON.parse(no.body?.toString() ?? "{}")).toMatchObject({ error: expect.stringContaining("32 MiB budget for bodies in memory") });
    }
    await stop(listen);
    // The recording says why; the relayed request's line still holds its body, parsed.
    const lines = readFileSync(recording, "utf8")
      .trim()
      .split("\n")
      // biome-ignore lint/suspicious/noExplicitAny: recording lines, read field by field in the assertions
      .map((line) => JSON.parse(line) as Record<string, any>);
    expect(lines).toHaveLength(200);
    expect(lines.filter((line) => line["response"].status === null)[0]?.["response"]).toMatchObject({
      error: expect.stringContaining("answer not relayed: it would pass listen's 32 MiB budget"),
    });
    expect(lines[0]?.["body"]).toEqual(JSON.parse(body));
  }, 60_000);
});

// util-linux `script` gives listen a real terminal on stdin (the `r` key); without it there is nothing to test.
const hasScript = spawnSync("script", ["--version"]).status === 0;

describe.skipIf(!hasScript)("plain listen on a terminal", { tags: ["smoke"] }, () => {
  it("keeps only the latest request for the r key: 40 bodies of 1 MiB [{},…] stay within the ceiling, and r still resends the last", async () => {
    const command = [process.execPath, BIN, "listen", "--port", "0"].map((arg) => `'${arg}'`).join(" ");
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
    delete env["WEBHOOK_SECRET"];
    const child = spawn("script", ["-qfec", command, "/dev/null"], { env, stdio: ["pipe", "pipe", "pipe"] });
    children.push(child);
    const done = collect(child, 60_000);
    const [, url] = await waitForLine(child, /Listening on (\S+)\s[\s\S]*Press r to resend/, 15_000);
    const pid = nodeUnder(child.pid as number);
    expect(pid).toBeDefined();
    const listen: Started = { child, url: url as string, page: undefined, done, rss: watchRss(pid as number) };
    const sent = await sendAll(listen, Array(40).fill(EMPTY_OBJECTS));
    console.log(`terminal: ${sent} bodies of 1 MiB, peak RSS ${Math.round(listen.rss.peak)} MB`);
    expect(listen.rss.over, `RSS passed ${RSS_LIMIT_MB} MB after ${sent} bodies`).toBe(false);
    expect(sent).toBe(40);
    child.stdin.write("r");
    await waitForLine(child, /↻ R1 resend of #40 → \S+ {2}200/, 15_000);
    // The resend went to listen itself, so it is now the latest request.
    child.stdin.write("r");
    await waitForLine(child, /↻ R2 resend of #41 → \S+ {2}200/, 15_000);
    listen.rss.stop();
    child.stdin.write("\u0003");
    expect((await done).stdout).toContain("Summary: 42 requests");
  }, 90_000);
});
