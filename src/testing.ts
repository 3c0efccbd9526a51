// `webhook-cli/testing`: helpers for tests of code built on webhook-cli, and of webhook-cli itself.
// The types their signatures use (PreparedRequest, AttemptOutcome, …) come from `webhook-cli`.
// The declarations name Node.js types (Buffer, node:crypto, node:events): the .d.ts asks for
// @types/node itself, so a project whose tsconfig lists no "types" (what `tsc --init` writes, and
// TypeScript 6's default) resolves them. "preserve" keeps the directive in the emitted .d.ts.
/// <reference types="node" preserve="true" />
import type { StartReceiverOptions, TestReceiver } from "./testing/types.js";

export { VirtualClock, seededRandom, type Clock, type Random, type TimerHandle } from "./util/clock.js";
export { FakeTransport, answers, byUrl, type FakeAnswer, type FakeRequest, type FakeResponder, type FakeTransportOptions } from "./delivery/fake-transport.js";
export type { DeliveryTransport, AttemptReport } from "./delivery/transport.js";
// What waitFor rejects with at its timeout.
export { WaitTimeoutError } from "./errors.js";

// listen's receiver in the test's own process (docs/library.md#a-receiver-in-your-tests); loaded on
// first use, so a test that only wants the clock loads no server.
export type {
  StartReceiverOptions,
  TestReceiver,
  ReceivedWebhook,
  ReceivedVerdict,
  ReceiverFaults,
  WebhookMatcher,
  MatchedMessage,
  WaitOptions,
  RequestMatch,
  ResponseRule,
  BodyKind,
  VerdictFilter,
} from "./testing/types.js";

/** Starts listen's receiver here, on `port` (default 0: any free port); resolves once it is listening. */
export async function startReceiver(options: StartReceiverOptions = {}): Promise<TestReceiver> {
  const { startTestReceiver } = await import("./testing/receiver.js");
  return startTestReceiver(options);
}
