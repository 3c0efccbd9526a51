import { resolve } from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import { UsageError } from "../../errors.js";
import { DeliveryEngine } from "../../delivery/deliver.js";
import type { DeliveryResult } from "../../delivery/types.js";
import { snakeName, type MembershipChange } from "../../service/audience.js";
import { planAudienceSync, readMembersFile, runAudienceSync } from "../../service/audience-sync.js";
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
  output.maskSecret(settings.secret);
  const members = readMembersFile(resolve(io.cwd, options.members), options.members);
  const plan = planAudienceSync({ name: options.name, trait, members, statePath: resolve(io.cwd, options.state), stateName: options.state });
  const { changes } = plan;

  const engine = new DeliveryEngine(settings, {
    ...engineOptions,
    ...(deps.clock ? { clock: deps.clock } : {}),
    ...(deps.random ? { random: deps.random } : {}),
    onAttempt: (event) => logFailedAttempt(output, event),
  });

  output.log(
    `audience "${options.name}" → trait ${trait}: ${members.length} member${members.length === 1 ? "" : "s"}, ` +
      `${changes.filter((c) => c.member).length} entered, ${changes.filter((c) => !c.member).length} left${plan.first ? " (first sync)" : ""}`,
  );

  let result;
  try {
    result = await runAudienceSync(plan, {
      engine,
      clock: deps.clock ?? systemClock,
      signal: io.signal,
      ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
      onResult: (line, change, delivery) => report(output, line, change, delivery),
    });
  } finally {
    await engine.close();
  }

  const { delivered, failed, notDelivered, interrupted } = result;
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

const rawSchema = z.object({
  name: z.string(),
  members: z.string(),
  state: z.string(),
  ...deliveryOptionsShape,
  concurrency: integer("--concurrency", 1, 256).optional(),
  json: z.boolean().optional(),
});

export function registerAudience(program: Command, context: CommandContext): void {
  const audience = program.command("audience").description("send an audience's membership changes as identify messages");
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
