// Runs every function of a checkout of segmentio/functions-library through webhook-cli's command
// line and under the library's own runtime shim (buildpack/boreal, loaded from the checkout at run
// time), and prints per function whether the outcomes agree: the outcome (delivered, skipped,
// failed, to be retried) with the error's class, the requests sent out, and for a source function
// the messages and objects it emitted.
//
//   npm run build
//   node scripts/compare-functions-library.mjs /path/to/functions-library [--answer STATUS] [--verbose]
//
// Destination functions go through `webhook-cli send --function` (one process per function, its
// events in order, `--function-egress` to the receiver below, `--retry-window 0` so a retry is
// reported, not waited for): one event of each type (webhook-cli's seeded examples) and two fuller
// ones (a track and an identify with an email, an IP and a user agent, which several of the
// functions need before they send anything). Source functions go through `webhook-cli function run
// --request` on each of their own webhook-examples. Every request either side makes goes to one
// local receiver (127.0.0.1, port 0) that answers 200 {}, as the library's own tests answer them,
// or `--answer STATUS` (500 exercises RetryError). The checkout needs its own dependencies
// installed (npm install --omit=dev in it): the shim requires node-fetch, lodash, aws-sdk and the
// rest; webhook-cli takes its third-party globals from there too (the current directory).
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import Module, { createRequire } from "node:module";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isDeepStrictEqual } from "node:util";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const [checkoutArg, ...flags] = process.argv.slice(2);
if (!checkoutArg) {
  console.error("usage: node scripts/compare-functions-library.mjs CHECKOUT [--verbose]");
  process.exit(2);
}
const verbose = flags.includes("--verbose");
const answerAt = flags.indexOf("--answer");
const ANSWER = answerAt === -1 ? 200 : Number(flags[answerAt + 1]);
const checkout = resolve(checkoutArg);
const BIN = join(ROOT, "bin", "webhook-cli.js");
const { buildExamples } = await import(join(ROOT, "dist", "messages/examples.js"));
const scratch = mkdtempSync(join(tmpdir(), "compare-functions-"));
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));

const EXAMPLES = buildExamples(undefined, { seed: 7, now: new Date("2024-05-01T12:00:00.000Z") });
const FULLER = { email: "peter@initech.com", context: { ip: "203.0.113.7", userAgent: "Mozilla/5.0 (X11; Linux x86_64)" } };
const EVENTS = [
  ...EXAMPLES.map((event) => ({ label: event.type, event })),
  { label: "track (fuller)", event: { ...EXAMPLES.find((e) => e.type === "track"), ...FULLER, event: "Signed Up" } },
  { label: "identify (fuller)", event: { ...EXAMPLES.find((e) => e.type === "identify"), ...FULLER, traits: { name: "Peter Gibbons", email: FULLER.email } } },
];
const SETTINGS = { apiKey: "abcd1234" };
const HEADER = "x-function-fetch-url";
const SHIM_LIMIT_MS = 10_000;

// The receiver every request goes to; each run reads the requests it added.
const received = [];
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    received.push({ method: req.method, url: req.headers[HEADER] ?? req.url, body: Buffer.concat(chunks).toString() });
    res.writeHead(ANSWER, { "content-type": "application/json" }).end("{}");
  });
});
await new Promise((done) => receiver.listen(0, "127.0.0.1", done));
const egress = new URL(`http://127.0.0.1:${receiver.address().port}/egress`);

// The shim, with its fetch sent to the same receiver (the library's tests intercept it with nock).
const requireFromCheckout = createRequire(join(checkout, "package.json"));
const shimWindow = requireFromCheckout("./buildpack/boreal/window");
const shim = requireFromCheckout("./buildpack/boreal");
const nodeFetch = requireFromCheckout("node-fetch");
// The shim's functions log to Node's console; kept out of this report as webhook-cli's are.
shimWindow.console = { log() {}, info() {}, warn() {}, error() {}, debug() {} };
shimWindow.fetch = (input, init) => {
  const request = new nodeFetch.Request(input, init);
  const headers = { ...Object.fromEntries(Object.entries(request.headers.raw()).map(([k, v]) => [k, v.join(", ")])), [HEADER]: request.url };
  return nodeFetch(egress.href, { method: request.method, headers, body: request.body });
};

/** webhook-cli run as a user runs it, from the checkout (its node_modules hold the third-party globals); its stdout's JSON events and its stderr. */
function cli(args) {
  return new Promise((done, fail) => {
    const { WEBHOOK_SECRET: _, ...env } = process.env;
    const child = spawn(process.execPath, [BIN, ...args, "--json"], { cwd: checkout, env: { ...env, NO_COLOR: "1" } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", fail);
    child.on("close", (code) =>
      done({
        code,
        stderr,
        events: stdout
          .split("\n")
          .filter(Boolean)
          .map((line) => JSON.parse(line)),
      }),
    );
  });
}

/** One side's result, in the terms compared: the outcome, the error's class, the requests, the emitted calls. */
function fromOurs(record) {
  return {
    outcome: record.outcome.kind,
    // A missing handler: the service (and the shim's default handler) throws EventNotSupported.
    error: record.thrown?.name ?? (record.outcome.kind === "skipped" ? "EventNotSupported" : null),
    messages: record.outcome.kind === "delivered" ? record.messages : [],
    objects: record.outcome.kind === "delivered" ? record.objects : [],
  };
}

/** A function the command line refused to load (exit 2): its error's class, as the shim throws it on each call. */
function notLoaded(run) {
  const message = run.stderr.trim();
  const name = /threw while loading: (\w+):/.exec(message)?.[1] ?? /SyntaxError/.exec(message)?.[0] ?? "LoadError";
  return { outcome: "failed", error: name, messages: [], objects: [], loadError: message };
}

function fromShim(settled, kind) {
  if (settled.ok) {
    const value = settled.value ?? {};
    return {
      outcome: "delivered",
      error: null,
      messages: kind === "source" ? (value.events ?? []) : [],
      objects: kind === "source" ? (value.objects ?? []) : [],
    };
  }
  const error = settled.error;
  const name = error?.name ?? typeof error;
  // The docs' table, applied to what the shim throws (the shim itself only rethrows).
  const outcome = name === "EventNotSupported" ? "skipped" : name === "RetryError" || name === "Timeout" ? "retry" : "failed";
  return { outcome, error: name, messages: [], objects: [] };
}

// A body holding the time of the run (datadog's points: epoch seconds) is compared with that time masked:
// the two runs of one case may fall on either side of a second.
const EPOCH_SECONDS = /\b1\d{9}\b/g;
const nowMasked = (text) => text.replace(EPOCH_SECONDS, (digits) => (Math.abs(Number(digits) - Date.now() / 1000) < 600 ? "<now>" : digits));

const requestLine = ({ method, url, body }) => `${method} ${url} ${nowMasked(body)}`;

async function withRequests(run) {
  const from = received.length;
  const result = await run();
  await new Promise((done) => setTimeout(done, 20));
  return { ...result, requests: received.slice(from).map(requestLine) };
}

async function runShim(dir, call) {
  process.chdir(dir);
  // The shim resolves "./handler" from the cwd through Node's resolution cache, keyed by the
  // request alone: without this, every function after the first would load the first one's file.
  // (The library's jest tests get a fresh module registry per test file instead.)
  for (const key of Object.keys(Module._pathCache)) delete Module._pathCache[key];
  const limit = new Promise((done) => setTimeout(() => done({ ok: false, error: { name: "Timeout" } }), SHIM_LIMIT_MS).unref());
  return Promise.race([
    call().then(
      (value) => ({ ok: true, value }),
      (error) => ({ ok: false, error }),
    ),
    limit,
  ]);
}

// Compared as the JSON they would be sent as: the shim's objects come partly from the function's
// own context (another realm's Object.prototype), which a deep-equality check tells apart.
const asSent = (value) => JSON.parse(JSON.stringify(value));

function differences(ours, theirs) {
  const keys = ["outcome", "error", "requests", "messages", "objects"];
  return keys.filter((key) => !isDeepStrictEqual(asSent(ours[key]), asSent(theirs[key])));
}

const results = [];

async function compareCase(name, label, ours, theirs) {
  const diff = differences(ours, theirs);
  results.push({ name, label, diff, ours, theirs });
}

/**
 * A destination function through `send --function`: its events in one run, in order, one at a time,
 * so the requests the receiver got split by each invocation's count of them.
 */
async function destination(name) {
  const dir = join(checkout, "destinations", name);
  const file = join("destinations", name, "handler.js");
  const events = join(scratch, `${name}.ndjson`);
  writeFileSync(events, `${EVENTS.map(({ event }) => JSON.stringify(event)).join("\n")}\n`);
  const from = received.length;
  const run = await cli(["send", events, "--function", file, "--settings", JSON.stringify(SETTINGS), "--function-egress", egress.href, "--retry-window", "0"]);
  await new Promise((done) => setTimeout(done, 20));
  const deliveries = run.events.filter((event) => event.event === "delivery");
  const requests = received.slice(from).map(requestLine);
  for (const [i, { label, event }] of EVENTS.entries()) {
    const url = deliveries[i]?.urls[0];
    const record = url?.invocation ?? (url?.skipped !== undefined ? { outcome: { kind: "skipped" }, messages: [], objects: [], fetches: [] } : undefined);
    const ours = record ? { ...fromOurs(record), requests: requests.splice(0, record.fetches.length) } : { ...notLoaded(run), requests: [] };
    const theirs = await withRequests(async () =>
      fromShim(await runShim(dir, () => shim.processDestinationPayload({ event: structuredClone(event), settings: SETTINGS })), "destination"),
    );
    await compareCase(`destinations/${name}`, label, ours, theirs);
  }
}

/** A source function through `function run --request` on each of its own webhook-examples. */
async function source(name) {
  const dir = join(checkout, "sources", name);
  const examplesDir = join(dir, "webhook-examples");
  if (!existsSync(examplesDir)) {
    results.push({ name: `sources/${name}`, label: null, skipped: "no webhook-examples" });
    return;
  }
  for (const example of readdirSync(examplesDir).sort()) {
    const document = JSON.parse(readFileSync(join(examplesDir, example), "utf8"));
    const ours = await withRequests(async () => {
      const run = await cli([
        "function",
        "run",
        join("sources", name, "handler.js"),
        "--request",
        join(examplesDir, example),
        "--function-egress",
        egress.href,
      ]);
      const invocation = run.events.find((event) => event.event === "invocation");
      return invocation ? fromOurs(invocation) : notLoaded(run);
    });
    // The shim keeps a failed run's Segment calls for the next one: start each from empty.
    shimWindow.Segment.events = [];
    shimWindow.Segment.objects = [];
    const theirs = await withRequests(async () => fromShim(await runShim(dir, () => shim.processSourcePayload(structuredClone(document))), "source"));
    await compareCase(`sources/${name}`, example, ours, theirs);
  }
}

const names = (kind) =>
  readdirSync(join(checkout, kind), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
for (const name of names("destinations")) await destination(name);
for (const name of names("sources")) await source(name);
receiver.close();

const byFunction = new Map();
for (const result of results) {
  const list = byFunction.get(result.name) ?? [];
  list.push(result);
  byFunction.set(result.name, list);
}
const summary = { functions: 0, agree: 0, differ: 0, notRun: 0, cases: 0, casesAgree: 0 };
const show = (side) =>
  `${side.outcome}${side.error ? ` ${side.error}` : ""}, ${side.requests.length} request(s), ${side.messages.length} message(s), ${side.objects.length} object(s)`;
for (const [name, list] of byFunction) {
  summary.functions += 1;
  if (list[0].skipped) {
    summary.notRun += 1;
    console.log(`not run  ${name}: ${list[0].skipped}`);
    continue;
  }
  const differing = list.filter((result) => result.diff.length > 0);
  summary.cases += list.length;
  summary.casesAgree += list.length - differing.length;
  if (differing.length === 0) summary.agree += 1;
  else summary.differ += 1;
  const outcomes = [...new Set(list.map((result) => result.ours.outcome + (result.ours.error ? ` ${result.ours.error}` : "")))].join("; ");
  console.log(`${differing.length === 0 ? "agree " : "DIFFER"}   ${name}: ${list.length - differing.length}/${list.length} cases agree (${outcomes})`);
  for (const result of verbose ? list : differing) {
    console.log(`    ${result.label}: ${result.diff.length ? `differs in ${result.diff.join(", ")}` : "agrees"}`);
    console.log(`      webhook-cli: ${show(result.ours)}${result.ours.loadError ? ` (${result.ours.loadError})` : ""}`);
    console.log(`      shim:        ${show(result.theirs)}`);
    if (result.diff.includes("requests") || result.diff.includes("messages") || result.diff.includes("objects")) {
      for (const key of ["requests", "messages", "objects"].filter((k) => result.diff.includes(k))) {
        console.log(`      ${key} (webhook-cli): ${JSON.stringify(result.ours[key]).slice(0, 400)}`);
        console.log(`      ${key} (shim):        ${JSON.stringify(result.theirs[key]).slice(0, 400)}`);
      }
    }
  }
}
console.log(
  `\nanswering ${ANSWER}, destinations through send --function, sources through function run --request: ${summary.functions} functions: ${summary.agree} agree, ${summary.differ} differ, ${summary.notRun} not run; ` +
    `${summary.cases} cases: ${summary.casesAgree} agree, ${summary.cases - summary.casesAgree} differ`,
);
process.exit(0);
