// `webhook-cli/testing`: helpers for tests of code built on webhook-cli, and of webhook-cli itself.
export { VirtualClock, seededRandom, type Clock, type Random, type TimerHandle } from "./util/clock.js";
export { FakeTransport, answers, byUrl, type FakeAnswer, type FakeRequest, type FakeResponder, type FakeTransportOptions } from "./delivery/fake-transport.js";
// The interface FakeTransport implements and the types of its signatures (also exported by `webhook-cli`).
export type { DeliveryTransport, AttemptReport } from "./delivery/transport.js";
export type { PreparedRequest } from "./delivery/types.js";
