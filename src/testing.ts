// `webhook-cli/testing`: helpers for tests of code built on webhook-cli, and of webhook-cli itself.
// The types their signatures use (PreparedRequest, AttemptOutcome, …) come from `webhook-cli`.
export { VirtualClock, seededRandom, type Clock, type Random, type TimerHandle } from "./util/clock.js";
export { FakeTransport, answers, byUrl, type FakeAnswer, type FakeRequest, type FakeResponder, type FakeTransportOptions } from "./delivery/fake-transport.js";
export type { DeliveryTransport, AttemptReport } from "./delivery/transport.js";
