import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import { InputError, UsageError } from "../../errors.js";
import { DeliveryEngine } from "../../delivery/deliver.js";
import type { DeliveryResult } from "../../delivery/types.js";
import type { IdentifyMessage } from "../../messages/schemas.js";
import { applyChanges, membershipChanges, parseMembers, snakeName, type MembershipChange } from "../../service/audience.js";
import { systemClock, type Clock, type Random } from "../../util/clock.js";
import { addDeliveryOptions, deliveryOptionsShape, logFailedAttempt, resolveDeliveryOptions, withDeliveryFlags, type DeliveryFlags } from "../delivery-options.js";
import { interruptedExitCode, type CliIo, type CommandContext } from "../io.js";
import { integer, parseOptions, stripUndefined } from "../options.js";
import { createOutput, type Output } from "../output.js";

export interface AudienceSyncOptions extends DeliveryFlags {
  /** The audience's name; the trait is its snake_case form. */
  name: string;
  /** One user ID per line, or a JSON array of IDs. */
  members: string;
  /** JSON file of what was delivered (created on the first sync). */
  state: string;
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
  const { settings, engineOptions } = resolveDeliveryOptions(options, io, { requireTargets: true });
  const members = readMembers(resolve(io.cwd, options.members), options.members);
  const statePath = resolve(io.cwd, options.state);
  const state = readState(statePath, options.state);
  const before = state.audiences[trait]?.members ?? [];
  const first = state.audiences[trait] === undefined;
  const changes = membershipChanges(members, before);
  const clock = deps.clock ?? systemClock;

  const engine = new DeliveryEngine(settings, {
    ...engineOptions,
    ...(deps.clock ? { clock: deps.clock } : {}),
    ...(deps.random ? { random: deps.random } : {}),
    onAttempt: (event) => logFailedAttempt(output, event),
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

const rawSchema = z.object({
  name: z.string(),
  members: z.string(),
  state: z.string(),
  ...deliveryOptionsShape,
  concurrency: integer("--concurrency", 1, 256).optional(),
  json: z.boolean().optional(),
});

export function registerAudience(program: Command, context: CommandContext): void {
  const audience = program.command("audience").description("audience membership as identify messages (SPEC.md 3)");
  const sync = audience
    .command("sync")
    .description("send an identify for every membership change since the last delivered sync (all members on the first)")
    .requiredOption("--name <name>", "audience name; the trait is its snake_case form (VIP-Users 2024 → vip_users_2024)")
    .requiredOption("--members <file>", "current members: one user ID per line, or a JSON array of IDs")
    .requiredOption("--state <file>", "JSON file recording what was delivered (created on the first sync)");
  addDeliveryOptions(sync, { timeout: "deadline per attempt (default 5s)" })
    .option("--concurrency <n>", "identify messages in flight at once (default 8)")
    .option("--json", "one JSON object per change on stdout, then a summary")
    .addHelpText(
      "after",
      "\nExamples:\n  $ webhook-cli audience sync --name 'VIP-Users 2024' --members vip.txt --state audience-state.json --url http://127.0.0.1:8080/hook --secret s3cret",
    )
    .action(async (raw: Record<string, unknown>) => {
      context.exitCode = await audienceSync(withDeliveryFlags(stripUndefined(parseOptions(rawSchema, raw))), context.io);
    });
  audience.commands.forEach((command) => command.exitOverride());
}
