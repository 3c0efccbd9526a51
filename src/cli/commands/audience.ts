import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import { InputError, UsageError } from "../../errors.js";
import { DeliveryEngine } from "../../delivery/deliver.js";
import type { DeliveryResult } from "../../delivery/types.js";
import type { IdentifyMessage } from "../../messages/schemas.js";
import { applyChanges, membershipChanges, parseMembers, snakeName, type MembershipChange } from "../../service/audience.js";
import { resolveSettings } from "../../settings.js";
import { systemClock, type Clock, type Random } from "../../util/clock.js";
import { formatDuration } from "../../util/duration.js";
import { interruptedExitCode, type CliIo, type CommandContext } from "../io.js";
import { collect, duration, integer, parseOptions, stripUndefined } from "../options.js";
import { createOutput, type Output } from "../output.js";

export interface AudienceSyncOptions {
  /** The audience's name; the trait is its snake_case form. */
  name: string;
  /** One user ID per line, or a JSON array of IDs. */
  members: string;
  /** JSON file of what was delivered (created on the first sync). */
  state: string;
  urls?: string[];
  headers?: string[];
  secret?: string;
  secretFile?: string;
  config?: string;
  timeoutMs?: number;
  retryWindowMs?: number;
  ca?: string[];
  userAgent?: string;
  /** Identify messages in flight at once (default 8). */
  concurrency?: number;
  json?: boolean;
}

export interface AudienceDependencies {
  clock?: Clock;
  random?: Random;
}

/** The state file: per audience (by trait name), the members whose `true` was delivered and not revoked. */
interface StateFile {
  version: 1;
  audiences: Record<string, { name: string; members: string[]; syncedAt: string }>;
}

const stateSchema = z.object({
  version: z.literal(1),
  audiences: z.record(z.string(), z.object({ name: z.string(), members: z.array(z.string()), syncedAt: z.string() })),
});

// Written every so many deliveries too, so a killed sync loses little of what it recorded.
const SAVE_EVERY = 100;

/**
 * `audience sync` (SPEC.md 3): an identify with `{<snake_name>: true}` for each
 * member who entered since the last delivered state, `false` for each who
 * left. The state records only what was delivered, so a failed or interrupted
 * sync is completed by the next one. 0 all delivered, 1 any failed, 130/143
 * interrupted.
 */
export async function audienceSync(options: AudienceSyncOptions, io: CliIo, deps: AudienceDependencies = {}): Promise<number> {
  const output = createOutput(io, { json: options.json ?? false });
  const trait = snakeName(options.name);
  if (trait === "") throw new UsageError(`"${options.name}" has no letters or digits to name the trait`, { flag: "--name" });
  if (options.secret !== undefined && options.secretFile !== undefined) {
    throw new UsageError("give --secret or --secret-file, not both", { flag: "--secret-file" });
  }
  if (options.timeoutMs !== undefined && options.timeoutMs <= 0) throw new UsageError("the timeout must be more than 0", { flag: "--timeout" });
  const settings = resolveSettings({
    ...(options.urls ? { urls: options.urls } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.secret !== undefined ? { secret: options.secret } : {}),
    ...(options.secretFile !== undefined ? { secretFile: options.secretFile } : {}),
    ...(options.userAgent !== undefined ? { userAgent: options.userAgent } : {}),
    ...(options.config !== undefined ? { configPath: options.config } : {}),
    cwd: io.cwd,
    env: io.env,
    requireTargets: true,
  });
  const ca = readCaFiles(options.ca ?? [], io.cwd);
  const members = readMembers(resolve(io.cwd, options.members), options.members);
  const statePath = resolve(io.cwd, options.state);
  const state = readState(statePath, options.state);
  const before = state.audiences[trait]?.members ?? [];
  const first = state.audiences[trait] === undefined;
  const changes = membershipChanges(members, before);
  const clock = deps.clock ?? systemClock;

  const engine = new DeliveryEngine(settings, {
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.retryWindowMs !== undefined ? { retryWindowMs: options.retryWindowMs } : {}),
    ...(ca.length > 0 ? { ca } : {}),
    ...(deps.clock ? { clock: deps.clock } : {}),
    ...(deps.random ? { random: deps.random } : {}),
    onAttempt: (event) => {
      if (event.error !== null) {
        const next = event.retryInMs !== undefined ? `; retrying in ${formatDuration(event.retryInMs)}` : "";
        output.log(`${event.url}: attempt ${event.attempt} failed: ${event.error}${next}`);
      }
    },
  });

  output.log(
    `audience "${options.name}" → trait ${trait}: ${members.length} member${members.length === 1 ? "" : "s"}, ` +
      `${changes.filter((c) => c.member).length} entered, ${changes.filter((c) => !c.member).length} left${first ? " (first sync)" : ""}`,
  );

  const deliveredChanges: MembershipChange[] = [];
  let failed = 0;
  let interrupted = false;
  let sinceSave = 0;
  const save = (): void => {
    state.audiences[trait] = { name: options.name, members: applyChanges(before, deliveredChanges), syncedAt: new Date(clock.now()).toISOString() };
    writeState(statePath, options.state, state);
    sinceSave = 0;
  };

  try {
    let next = 0;
    const runOne = async (): Promise<void> => {
      while (next < changes.length && !interrupted) {
        if (io.signal.aborted) {
          interrupted = true;
          return;
        }
        const index = next++;
        const change = changes[index] as MembershipChange;
        const message: IdentifyMessage = {
          version: 1,
          type: "identify",
          userId: change.userId,
          traits: { [trait]: change.member },
          timestamp: new Date(clock.now()).toISOString(),
        };
        const result = await engine.deliver(JSON.stringify(message), { signal: io.signal });
        report(output, index + 1, change, result);
        if (result.interrupted) interrupted = true;
        else if (result.delivered) {
          deliveredChanges.push(change);
          if (++sinceSave >= SAVE_EVERY) save();
        } else failed += 1;
      }
    };
    await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 8, Math.max(1, changes.length)) }, runOne));
  } finally {
    // Only what was delivered is recorded, whatever happened.
    save();
    await engine.close();
  }

  const delivered = deliveredChanges.length;
  const notDelivered = changes.length - delivered - failed;
  output.event("summary", { audience: options.name, trait, members: members.length, changes: changes.length, delivered, failed, notDelivered, interrupted });
  const summary = `${trait}: ${changes.length} change${changes.length === 1 ? "" : "s"}, ${delivered} delivered, ${failed} failed`;
  if (interrupted) {
    output.line(`${summary}, ${notDelivered} not delivered (interrupted)`);
    output.log(`interrupted: ${notDelivered} change${notDelivered === 1 ? " was" : "s were"} not delivered; the next sync sends them`);
    return interruptedExitCode(io.signal);
  }
  output.line(summary);
  if (failed > 0) output.log(`${failed} change${failed === 1 ? " was" : "s were"} not delivered; the next sync retries them`);
  return failed > 0 ? 1 : 0;
}

function report(output: Output, line: number, change: MembershipChange, result: DeliveryResult): void {
  output.event("delivery", { line, type: "identify", userId: change.userId, member: change.member, delivered: result.delivered, urls: result.urls });
  const c = output.color;
  const mark = result.delivered ? c.green("✓") : result.interrupted ? c.yellow("!") : c.red("✗");
  const verdict = result.delivered ? "delivered" : result.interrupted ? "interrupted" : "failed";
  const why = result.delivered ? "" : result.urls.map((u) => (u.error ? `: ${u.url} ${u.error}` : "")).join("");
  output.line(`${mark} ${change.userId} ${change.member ? "entered" : "left"} → ${verdict}${why}`);
}

function readMembers(path: string, name: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new InputError(`cannot read members file: ${(error as Error).message}`, { flag: "--members", file: name });
  }
  const parsed = parseMembers(text);
  if (!parsed.ok) throw new InputError(parsed.error, { flag: "--members", file: name });
  return parsed.members;
}

function readState(path: string, name: string): StateFile {
  if (!existsSync(path)) return { version: 1, audiences: {} };
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new InputError(`not a valid state file: ${(error as Error).message}`, { flag: "--state", file: name });
  }
  const result = stateSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new InputError(`not a valid state file: ${issue?.path.join(".") ?? ""} ${issue?.message ?? ""}`.trim(), { flag: "--state", file: name });
  }
  return result.data;
}

function writeState(path: string, name: string, state: StateFile): void {
  // Write then rename: a crash leaves the old state or the new one, never half of one.
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`);
    renameSync(temporary, path);
  } catch (error) {
    throw new InputError(`cannot write state file: ${(error as Error).message}`, { flag: "--state", file: name });
  }
}

/** Reads `--ca` files (PEM), naming the file when one is unreadable or not a certificate. */
export function readCaFiles(files: readonly string[], cwd: string): string[] {
  return files.map((file) => {
    let text: string;
    try {
      text = readFileSync(resolve(cwd, file), "utf8");
    } catch (error) {
      throw new UsageError(`cannot read CA file: ${(error as Error).message}`, { flag: "--ca", file });
    }
    if (!text.includes("-----BEGIN CERTIFICATE-----")) throw new UsageError("not a PEM certificate (no BEGIN CERTIFICATE block)", { flag: "--ca", file });
    return text;
  });
}

const rawSchema = z.object({
  name: z.string(),
  members: z.string(),
  state: z.string(),
  url: z.array(z.string()).optional(),
  header: z.array(z.string()).optional(),
  secret: z.string().optional(),
  secretFile: z.string().optional(),
  config: z.string().optional(),
  timeout: duration("--timeout").optional(),
  retryWindow: duration("--retry-window").optional(),
  ca: z.array(z.string()).optional(),
  userAgent: z.string().min(1).optional(),
  concurrency: integer("--concurrency", 1, 256).optional(),
  json: z.boolean().optional(),
});

export function registerAudience(program: Command, context: CommandContext): void {
  const audience = program.command("audience").description("audience membership as identify messages (SPEC.md 3)");
  audience
    .command("sync")
    .description("send an identify for every membership change since the last delivered sync (all members on the first)")
    .requiredOption("--name <name>", "audience name; the trait is its snake_case form (VIP-Users 2024 → vip_users_2024)")
    .requiredOption("--members <file>", "current members: one user ID per line, or a JSON array of IDs")
    .requiredOption("--state <file>", "JSON file recording what was delivered (created on the first sync)")
    .option("--url <url>", "webhook URL (repeatable, at most 5; replaces the config's webhooks)", collect)
    .option("--header <header>", "static header 'Name: value' for the --url targets (repeatable)", collect)
    .option("--secret <secret>", "shared secret: sign with X-Signature (or $WEBHOOK_SECRET)")
    .option("--secret-file <file>", "read the shared secret from a file")
    .option("--config <file>", "destination settings file (default ./webhook-cli.json when present)")
    .option("--timeout <duration>", "deadline per attempt (default 5s)")
    .option("--retry-window <duration>", "no retry starts later than this after the first attempt (default 4h)")
    .option("--ca <file>", "also trust this CA certificate (PEM; repeatable)", collect)
    .option("--user-agent <ua>", "User-Agent header (default Segment.io/1.0)")
    .option("--concurrency <n>", "identify messages in flight at once (default 8)")
    .option("--json", "one JSON object per change on stdout, then a summary")
    .addHelpText(
      "after",
      "\nExamples:\n  $ webhook-cli audience sync --name 'VIP-Users 2024' --members vip.txt --state audience-state.json --url http://127.0.0.1:8080/hook --secret s3cret",
    )
    .action(async (raw: Record<string, unknown>) => {
      const parsed = stripUndefined(parseOptions(rawSchema, raw));
      const { url, header, timeout, retryWindow, ...rest } = parsed;
      context.exitCode = await audienceSync(
        {
          ...rest,
          ...(url ? { urls: url } : {}),
          ...(header ? { headers: header } : {}),
          ...(timeout !== undefined ? { timeoutMs: timeout } : {}),
          ...(retryWindow !== undefined ? { retryWindowMs: retryWindow } : {}),
        },
        context.io,
      );
    });
  audience.commands.forEach((command) => command.exitOverride());
}
