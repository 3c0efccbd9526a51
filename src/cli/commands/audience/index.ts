import { resolve } from "node:path";
import { UsageError } from "../../../errors.js";
import { undiciEngine } from "../../../delivery/undici-engine.js";
import type { DeliveryResult } from "../../../delivery/types.js";
import { snakeName, type MembershipChange } from "../../../audience/audience.js";
import { planAudienceSync, readMembersFile, runAudienceSync, type AudienceSyncResult } from "../../../audience/audience-sync.js";
import { systemClock, type Clock, type Random } from "../../../util/clock.js";
import { logFailedAttempt, resolveDeliveryOptions, warnIfUnsigned } from "../../shared/delivery-options.js";
import { interruptedExitCode, type CliIo } from "../../terminal/io.js";
import type { AudienceSyncFlags } from "./options.js";
import { createOutput, type Output } from "../../terminal/output.js";

export type AudienceSyncOptions = AudienceSyncFlags;

export interface AudienceDependencies {
  clock?: Clock;
  random?: Random;
}

/**
 * `audience sync` (docs/messages.md#audience-sync): an identify with `{<snake_name>: true}` for each
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
  output.maskSecret(settings.secrets);
  const members = readMembersFile(resolve(io.cwd, options.members), options.members);
  const plan = planAudienceSync({ name: options.name, trait, members, statePath: resolve(io.cwd, options.state), stateName: options.state });
  // Said once the members and the state were read, so a mistake in them is still a one-line answer.
  warnIfUnsigned(output, settings);
  const { changes } = plan;

  const engine = undiciEngine(settings, {
    ...engineOptions,
    clock: deps.clock,
    random: deps.random,
  });

  output.log(
    `audience "${options.name}" → trait ${trait}: ${members.length} member${members.length === 1 ? "" : "s"}, ` +
      `${changes.filter((c) => c.member).length} entered, ${changes.filter((c) => !c.member).length} left${plan.first ? " (first sync)" : ""}`,
  );

  let result: AudienceSyncResult;
  try {
    result = await runAudienceSync(plan, {
      engine,
      clock: deps.clock ?? systemClock,
      signal: io.signal,
      concurrency: options.concurrency,
      onAttempt: (event) => logFailedAttempt(output, event),
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
