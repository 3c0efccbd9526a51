import { existsSync, readFileSync } from "node:fs";
import { replaceFile } from "../util/replace-file.js";
import { z } from "zod";
import { InputError } from "../errors.js";
import type { DeliveryEngine } from "../delivery/deliver.js";
import type { AttemptEvent, DeliveryResult } from "../delivery/types.js";
import { dispatch, type DispatchEntry, type DispatchSummary } from "../dispatch/dispatcher.js";
import type { IdentifyMessage } from "../messages/schemas.js";
import type { Clock } from "../util/clock.js";
import { applyChanges, membershipChanges, parseMembers, type MembershipChange } from "./audience.js";
import { parseUntrustedJson } from "../json/parse.js";

/**
 * `audience sync` (docs/messages.md#audience-sync) without the terminal: the members and state
 * files, the diff against what was delivered, and the delivery loop.
 */

/** Identify messages in flight at once: one per member change, gentle on a receiver that may be production. */
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
    throw new InputError(`cannot read members file: ${(error as Error).message}`, { field: "members", file: name });
  }
  const parsed = parseMembers(text);
  if (!parsed.ok) throw new InputError(parsed.error, { field: "members", file: name });
  return parsed.members;
}

/** Reads `--state`; a missing file is an empty state (the first sync). */
function readAudienceState(path: string, name: string): AudienceStateFile {
  if (!existsSync(path)) return { version: 1, audiences: {} };
  let value: unknown;
  try {
    value = parseUntrustedJson(readFileSync(path, "utf8"));
  } catch (error) {
    throw new InputError(`not a valid state file: ${(error as Error).message}`, { field: "state", file: name });
  }
  const result = stateSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new InputError(`not a valid state file: ${issue?.path.join(".") ?? ""} ${issue?.message ?? ""}`.trim(), { field: "state", file: name });
  }
  return result.data;
}

function writeAudienceState(path: string, name: string, state: AudienceStateFile): void {
  try {
    replaceFile(path, `${JSON.stringify(state, null, 2)}\n`);
  } catch (error) {
    throw new InputError(`cannot write state file: ${(error as Error).message}`, { field: "state", file: name });
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
  concurrency?: number | undefined;
  /** After each attempt (failed attempts are logged). */
  onAttempt?: ((event: AttemptEvent) => void) | undefined;
  /** After each delivery; `line` is the change's 1-based position. */
  onResult?: ((line: number, change: MembershipChange, result: DeliveryResult) => void) | undefined;
}

export interface AudienceSyncResult {
  delivered: number;
  failed: number;
  notDelivered: number;
  interrupted: boolean;
}

interface ChangeEntry extends DispatchEntry {
  change: MembershipChange;
}

/**
 * Delivers an identify `{<trait>: member}` per change and records in the state
 * file only what was delivered (also every SAVE_EVERY deliveries), so a failed
 * or interrupted sync is completed by the next one.
 */
export async function runAudienceSync(plan: AudienceSyncPlan, run: AudienceSyncRun): Promise<AudienceSyncResult> {
  const recorder = new DeliveredChanges(plan, run.clock);
  let summary: DispatchSummary;
  try {
    summary = await dispatch<ChangeEntry>({
      source: plan.changes.map((change, i) => ({
        line: i + 1,
        orderKey: undefined,
        body: identifyBody(plan.trait, change, run.clock),
        time: undefined,
        change,
      })),
      engine: run.engine,
      concurrency: run.concurrency ?? DEFAULT_AUDIENCE_CONCURRENCY,
      clock: run.clock,
      signal: run.signal,
      hooks: {
        onAttempt: (_entry, event) => run.onAttempt?.(event),
        onResult: (entry, result) => {
          run.onResult?.(entry.line, entry.change, result);
          if (result.delivered) recorder.delivered(entry.change);
        },
      },
    });
  } finally {
    // Only what was delivered is recorded, whatever happened.
    recorder.save();
  }
  const { delivered, failed } = summary;
  return { delivered, failed, notDelivered: plan.changes.length - delivered - failed, interrupted: summary.stopped };
}

function identifyBody(trait: string, change: MembershipChange, clock: Clock): string {
  const message: IdentifyMessage = {
    version: 1,
    type: "identify",
    userId: change.userId,
    traits: { [trait]: change.member },
    timestamp: new Date(clock.now()).toISOString(),
  };
  return JSON.stringify(message);
}

/** The state file's record of what was delivered, saved every SAVE_EVERY deliveries and at the end. */
class DeliveredChanges {
  private readonly changes: MembershipChange[] = [];
  private sinceSave = 0;

  constructor(
    private readonly plan: AudienceSyncPlan,
    private readonly clock: Clock,
  ) {}

  delivered(change: MembershipChange): void {
    this.changes.push(change);
    if (++this.sinceSave >= SAVE_EVERY) this.save();
  }

  save(): void {
    const { plan } = this;
    plan.state.audiences[plan.trait] = {
      name: plan.name,
      members: applyChanges(plan.before, this.changes),
      syncedAt: new Date(this.clock.now()).toISOString(),
    };
    writeAudienceState(plan.statePath, plan.stateName, plan.state);
    this.sinceSave = 0;
  }
}
