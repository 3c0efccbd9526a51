import type { Target } from "../../config/destination.js";
import type { DeliveryEngine } from "../../delivery/deliver.js";
import { Batcher, type Batch } from "../../dispatch/batcher.js";
import { identityOf } from "../../dispatch/dispatcher.js";
import type { DispatchEntry, Slot } from "../../dispatch/types.js";
import { batchingFor, requestOf, unitOf } from "../../dispatch/units.js";
import { InputError } from "../../errors.js";
import { printDryRun } from "../terminal/attempt-log.js";
import type { Output } from "../terminal/output.js";

/** One message as --dry-run shows it: where it came from, and what would be sent. */
export interface DryRunInput {
  line: number;
  where: string;
  entry: Pick<DispatchEntry, "body" | "canonical" | "recorded" | "messageId" | "recordedId" | "type">;
}

type Held = Slot<DispatchEntry & { input: DryRunInput }>;

/**
 * `--dry-run` of send and replay: the exact request each target would get, built by the engine;
 * under Webhooks (Actions) with a batch size, the batches as they would go (docs/actions.md#batches),
 * and an event that would not be sent, with why.
 */
export class DryRun {
  private readonly batching: { targets: readonly Target[] } | undefined;
  private readonly batcher: Batcher<Held> | undefined;
  private index = 0;

  constructor(
    private readonly output: Output,
    private readonly engine: Pick<DeliveryEngine, "prepare" | "prepareContent">,
    private readonly settings: { destination?: string | undefined; targets: readonly Target[] },
  ) {
    this.batching = batchingFor(settings);
    this.batcher = this.batching ? new Batcher(this.batching.targets.map((target) => target.batchSize ?? 1)) : undefined;
  }

  add(input: DryRunInput): void {
    const { batcher } = this;
    if (batcher === undefined || input.entry.recorded !== undefined) {
      if (batcher) this.print(batcher.flush());
      for (const target of this.settings.targets) this.single(input, target);
      return;
    }
    const entry = { line: input.line, orderKey: undefined, time: undefined, ...input.entry, input };
    this.print(batcher.add({ entry, index: this.index++, orderKey: undefined, time: undefined, nextAttemptAt: undefined }, 0));
  }

  /** The batches still open, once the input ended. */
  end(): void {
    if (this.batcher) this.print(this.batcher.flush());
  }

  private single(input: DryRunInput, target: Target): void {
    const { recorded, canonical } = input.entry;
    try {
      const call = recorded !== undefined ? { recorded } : canonical === true ? { canonical } : {};
      printDryRun(this.output, input, this.engine.prepare(input.entry.body, target, { ...call, identity: identityOf(input.entry) }));
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      this.notSent(input, target, error.message);
    }
  }

  private print(batches: Batch<Held>[]): void {
    const targets = this.batching?.targets ?? [];
    for (const batch of batches) {
      const target = targets[batch.group] as Target;
      const { content, refused } = requestOf(unitOf(target, batch.group, batch.items));
      for (const [position, reason] of refused) this.notSent((batch.items[position] as Held).entry.input, target, reason);
      if (content === undefined) continue;
      const first = (batch.items[0] as Held).entry.input;
      const last = (batch.items.at(-1) as Held).entry.input;
      const where = target.batchSize === undefined ? first.where : `${first.where} to ${last.where} (batch of ${batch.items.length - refused.size})`;
      printDryRun(this.output, { line: first.line, where }, this.engine.prepareContent(target, content));
    }
  }

  private notSent(input: DryRunInput, target: Target, reason: string): void {
    if (this.output.json) this.output.event("request", { line: input.line, url: target.url, notSent: reason });
    else this.output.line(`# ${input.where} → ${target.url}: ${reason}`);
  }
}
