import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { z } from "zod";
import { InputError } from "../errors.js";
import type { DeliveryEngine } from "../delivery/deliver.js";
import type { DeliveryResult } from "../delivery/types.js";
import type { IdentifyMessage } from "../messages/schemas.js";
import type { Clock } from "../util/clock.js";
import { applyChanges, membershipChanges, parseMembers, type MembershipChange } from "./audience.js";
import { parseJson } from "../util/json-depth.js";

/**
 * `audience sync` (SPEC.md 3) without the terminal: the members and state
 * files, the diff against what was delivered, and the delivery loop.
 */

export const DEFAULT_AUDIENCE_CONCURRENCY = 8;

// Written every so many deliveries too, so a killed sync loses little of what it recorded.
const SAVE_EVERY = 100;

/** The state file: per audience (by trait name), the members whose `true` was delivered and not revoked. */
export interface AudienceStateFile {
  version: 1;
  audiences: Record<string, { name: string; members: string[]; syncedAt: string }>;
}

const stateSchema = z.object({
  version: z.literal(1),
  audiences: z.record(z.string(), z.object({ name: z.string(), members: z.array(z.string()), syncedAt: z.string() })),
});

/** Reads `--members` (one ID per line, or a JSON array); `name` is the flag's value, for errors. */
export function readMembersFile(path: string, name: string): string[] {
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

/** Reads `--state`; a missing file is an empty state (the first sync). */
export function readAudienceState(path: string, name: string): AudienceStateFile {
  if (!existsSync(path)) return { version: 1, audiences: {} };
  let value: unknown;
  try {
    value = parseJson(readFileSync(path, "utf8"));
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

export function writeAudienceState(path: string, name: string, state: AudienceStateFile): void {
  // Write then rename: a crash leaves the old state or the new one, never half of one.
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`);
    renameSync(temporary, path);
  } catch (error) {
    throw new InputError(`cannot write state file: ${(error as Error).message}`, { flag: "--state", file: name });
  }
}

/** What a sync will send: read from the state file before anything is delivered. */
export interface AudienceSyncPlan {
  /** The audience's name, as given. */
  name: string;
  /** Its snake_case trait. */
  trait: string;
  statePath: string;
  /** The `--state` value, for errors. */
  stateName: string;
  state: AudienceStateFile;
  /** Members whose `true` was delivered before this sync. */
  before: string[];
  /** No state yet for this audience. */
  first: boolean;
  changes: MembershipChange[];
}

export function planAudienceSync(input: { name: string; trait: string; members: readonly string[]; statePath: string; stateName: string }): AudienceSyncPlan {
  const state = readAudienceState(input.statePath, input.stateName);
  const before = state.audiences[input.trait]?.members ?? [];
  return {
    name: input.name,
    trait: input.trait,
    statePath: input.statePath,
    stateName: input.stateName,
    state,
    before,
    first: state.audiences[input.trait] === undefined,
    changes: membershipChanges(input.members, before),
  };
}

export interface AudienceSyncRun {
  engine: Pick<DeliveryEngine, "deliver">;
  clock: Clock;
  signal: AbortSignal;
  /** Identify messages in flight at once (default 8). */
  concurrency?: number;
  /** After each delivery; `line` is the change's 1-based position. */
  onResult?: (line: number, change: MembershipChange, result: DeliveryResult) => void;
}

export interface AudienceSyncResult {
  delivered: number;
  failed: number;
  notDelivered: number;
  interrupted: boolean;
}

/**
 * Delivers an identify `{<trait>: member}` per change and records in the state
 * file only what was delivered (also every SAVE_EVERY deliveries), so a failed
 * or interrupted sync is completed by the next one.
 */
export async function runAudienceSync(plan: AudienceSyncPlan, run: AudienceSyncRun): Promise<AudienceSyncResult> {
  const { changes, trait, state } = plan;
  const deliveredChanges: MembershipChange[] = [];
  let failed = 0;
  let interrupted = false;
  let sinceSave = 0;
  const save = (): void => {
    state.audiences[trait] = { name: plan.name, members: applyChanges(plan.before, deliveredChanges), syncedAt: new Date(run.clock.now()).toISOString() };
    writeAudienceState(plan.statePath, plan.stateName, state);
    sinceSave = 0;
  };

  try {
    let next = 0;
    const runOne = async (): Promise<void> => {
      while (next < changes.length && !interrupted) {
        if (run.signal.aborted) {
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
          timestamp: new Date(run.clock.now()).toISOString(),
        };
        const result = await run.engine.deliver(JSON.stringify(message), { signal: run.signal });
        run.onResult?.(index + 1, change, result);
        if (result.interrupted) interrupted = true;
        else if (result.delivered) {
          deliveredChanges.push(change);
          if (++sinceSave >= SAVE_EVERY) save();
        } else failed += 1;
      }
    };
    const workers = Math.min(run.concurrency ?? DEFAULT_AUDIENCE_CONCURRENCY, Math.max(1, changes.length));
    await Promise.all(Array.from({ length: workers }, runOne));
  } finally {
    // Only what was delivered is recorded, whatever happened.
    save();
  }

  const delivered = deliveredChanges.length;
  return { delivered, failed, notDelivered: changes.length - delivered - failed, interrupted };
}
