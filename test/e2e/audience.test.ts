import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { verify } from "../../src/signing/x-signature.js";
import { startServer, type TestServer } from "../helpers/http-server.js";
import { runInProcess, startInProcess } from "../helpers/run-cli.js";

const SECRET = "aud-secret";
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "webhook-cli-e2e-audience-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

type Identify = { version: number; type: string; userId: string; traits: Record<string, unknown>; timestamp: string };
const identifies = (server: TestServer, from = 0): Identify[] => server.requests.slice(from).map((r) => JSON.parse(r.body.toString()) as Identify);
const traitsById = (messages: Identify[]) => Object.fromEntries(messages.map((m) => [m.userId, m.traits]));

describe("webhook-cli audience sync", () => {
  it("first sync sends true for every member; later syncs only the changes; a failed change is completed next time", async () => {
    let refuse = new Set<string>(["carol"]);
    const receiver = await startServer((request, res) => {
      const { userId } = JSON.parse(request.body.toString()) as { userId: string };
      res.statusCode = refuse.has(userId) ? 400 : 200;
      res.end();
    });
    cleanups.push(() => receiver.close());
    const dir = tempDir();
    const members = join(dir, "members.txt");
    const state = join(dir, "state.json");
    const args = ["audience", "sync", "--name", "VIP-Users 2024", "--members", members, "--state", state, "--url", `${receiver.url}/hook`, "--secret", SECRET];

    writeFileSync(members, "alice\nbob\n\ncarol\n");
    const first = await runInProcess(args);
    expect(first.code).toBe(1);
    expect(traitsById(identifies(receiver))).toEqual({ alice: { vip_users_2024: true }, bob: { vip_users_2024: true }, carol: { vip_users_2024: true } });
    for (const request of receiver.requests) expect(verify(SECRET, request.body, request.headers["x-signature"])).toBe(true);
    for (const message of identifies(receiver)) {
      expect(Object.keys(message)).toEqual(["version", "type", "userId", "traits", "timestamp"]);
      expect(message).toMatchObject({ version: 1, type: "identify" });
    }
    expect(first.stdout).toContain("3 changes, 2 delivered, 1 failed");
    const afterFirst = JSON.parse(readFileSync(state, "utf8")) as { audiences: Record<string, { members: string[] }> };
    expect(afterFirst.audiences["vip_users_2024"]!.members.sort()).toEqual(["alice", "bob"]);

    // carol is accepted now; bob left, dave joined (a JSON array this time).
    refuse = new Set();
    writeFileSync(members, JSON.stringify(["alice", "carol", "dave"]));
    const seen = receiver.requests.length;
    const second = await runInProcess([...args, "--json"]);
    expect(second.code).toBe(0);
    expect(traitsById(identifies(receiver, seen))).toEqual({ carol: { vip_users_2024: true }, dave: { vip_users_2024: true }, bob: { vip_users_2024: false } });
    const summary = JSON.parse(second.stdout.trim().split("\n").at(-1)!) as Record<string, unknown>;
    expect(summary).toMatchObject({ event: "summary", changes: 3, delivered: 3, failed: 0, interrupted: false });

    // Nothing changed: nothing sent.
    const before = receiver.requests.length;
    const third = await runInProcess(args);
    expect(third.code).toBe(0);
    expect(receiver.requests.length).toBe(before);
    const final = JSON.parse(readFileSync(state, "utf8")) as { audiences: Record<string, { members: string[]; name: string }> };
    expect(final.audiences["vip_users_2024"]).toMatchObject({ name: "VIP-Users 2024" });
    expect(final.audiences["vip_users_2024"]!.members.sort()).toEqual(["alice", "carol", "dave"]);
  });

  it("SIGTERM while a change waits to be retried exits 143 and records only what was delivered", async () => {
    let sick = true;
    const receiver = await startServer((request, res) => {
      const { userId } = JSON.parse(request.body.toString()) as { userId: string };
      res.statusCode = sick && userId === "slow" ? 503 : 200;
      res.end();
    });
    cleanups.push(() => receiver.close());
    const dir = tempDir();
    const members = join(dir, "members.txt");
    const state = join(dir, "state.json");
    writeFileSync(members, "fast1\nslow\nfast2\n");
    const args = ["audience", "sync", "--name", "Beta", "--members", members, "--state", state, "--url", `${receiver.url}/hook`, "--retry-window", "1h"];

    const sync = startInProcess(args);
    const reached = (): boolean => receiver.requests.some((r) => r.body.toString().includes('"slow"')) && receiver.requests.length >= 3;
    await expect.poll(reached, { timeout: 15_000, interval: 25, message: "the sync reaches the receiver" }).toBe(true);
    sync.stop("SIGTERM");
    const interrupted = await sync.done;
    expect(interrupted.code).toBe(143);
    expect(interrupted.stdout).toContain("not delivered (interrupted)");
    const recorded = JSON.parse(readFileSync(state, "utf8")) as { audiences: Record<string, { members: string[] }> };
    expect(recorded.audiences["beta"]!.members.sort()).toEqual(["fast1", "fast2"]);

    sick = false;
    const seen = receiver.requests.length;
    const resumed = await runInProcess(args);
    expect(resumed.code).toBe(0);
    expect(traitsById(identifies(receiver, seen))).toEqual({ slow: { beta: true } });
  });

  it("bad input exits 2 naming the file or flag, sending nothing", async () => {
    const receiver = await startServer();
    cleanups.push(() => receiver.close());
    const dir = tempDir();
    const badMembers = join(dir, "bad.json");
    writeFileSync(badMembers, '["ok", {"id": 1}]');
    const base = ["--state", join(dir, "s.json"), "--url", `${receiver.url}/hook`];
    const [bad, missing, noName] = await Promise.all([
      runInProcess(["audience", "sync", "--name", "X", "--members", badMembers, ...base]),
      runInProcess(["audience", "sync", "--name", "X", "--members", join(dir, "absent.txt"), ...base]),
      runInProcess(["audience", "sync", "--name", "!!!", "--members", badMembers, ...base]),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("bad.json");
    expect(bad.stderr).toContain("element [1]");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("absent.txt");
    expect(noName.code).toBe(2);
    expect(noName.stderr).toContain("--name");
    expect(receiver.requests).toHaveLength(0);
  });
});
