import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../helpers/loaded-modules.js";
import { exportTable, exportsOf, unexportedTypes, type Entry } from "../helpers/public-face.js";

// The package's public face, name by name, as a dependent project sees it: the built dist/
// (npm run build) imported by package name, and its .d.ts. A change to src/index.ts,
// src/client.ts or src/testing.ts shows here as a diff: it is a change to what semver covers
// (CHANGELOG.md), so update these lists on purpose, with docs/library.md and the CHANGELOG.
const MAIN: Entry = { specifier: "webhook-cli", dts: "dist/index.d.ts" };
const CLIENT: Entry = { specifier: "webhook-cli/client", dts: "dist/client.d.ts" };
const TESTING: Entry = { specifier: "webhook-cli/testing", dts: "dist/testing.d.ts" };
const ENTRIES = [MAIN, CLIENT, TESTING];

describe("the public face", () => {
  it('"webhook-cli" exports exactly these names', async () => {
    const { face, runtimeNames, declaredValues } = await exportsOf(MAIN, ENTRIES);
    expect(face).toEqual([
      "class Analytics",
      "class BatchDeliveryError",
      "class ClosedError",
      "class ConfigError",
      "class QueueFullError",
      "class SchemeError",
      "class SecretFormatError",
      "class ValidationError",
      "class WebhookCliError",
      "function checkMessage",
      "function createDeliveryEngine",
      "function isMessageType",
      "function judgeRequest",
      "function messageId",
      "function planNextRound",
      "function recogniseSchemes",
      "function requestVerifier",
      "function schemeKeys",
      "function sign",
      "function signRequest",
      "function signingKey",
      "function verify",
      "function verifySignature",
      "type AliasCall",
      "type AliasKeys",
      "type AliasMessage",
      "type AliasMessageCamel",
      "type AliasMessageSpec",
      "type AnalyticsEvents",
      "type AnalyticsOptions",
      "type AnalyticsStats",
      "type AttemptEvent",
      "type AttemptOutcome",
      "type AttemptReport",
      "type BodyBytes",
      "type CallType",
      "type Callback",
      "type CapturedResponse",
      "type CheckOptions",
      "type Clock",
      "type CommonFields",
      "type DeleteMessage",
      "type DeliverCall",
      "type DeliveryEngine",
      "type DeliveryEngineOptions",
      "type DeliveryResult",
      "type DeliveryTransport",
      "type Destination",
      "type Diagnosis",
      "type DiagnosisCause",
      "type ErrorCode",
      "type ErrorSource",
      "type FlushEvent",
      "type GroupCall",
      "type GroupMessage",
      "type HttpMethod",
      "type IdentifyCall",
      "type IdentifyMessage",
      "type Identity",
      "type Integrations",
      "type KeptBody",
      "type Mapping",
      "type MappingNode",
      "type Message",
      "type MessageType",
      "type NextRound",
      "type NextRoundInput",
      "type NotRecognised",
      "type PageCall",
      "type PageMessage",
      "type PreparedRequest",
      "type Random",
      "type RefusalReason",
      "type Refused",
      "type RequestContent",
      "type RequestHeaders",
      "type RequestVerdict",
      "type RequestVerifier",
      "type RequestVerifierOptions",
      "type RetryRules",
      "type Scheme",
      "type SchemeKey",
      "type SchemeName",
      "type ScreenCall",
      "type ScreenContext",
      "type ScreenMessage",
      "type SecretFormat",
      "type SecretKey",
      "type SendOptions",
      "type ShapeCheck",
      "type ShapeIssue",
      "type SignInput",
      "type SignatureHeader",
      "type SignatureRule",
      "type SignedContent",
      "type SignedRequest",
      "type Target",
      "type TimerHandle",
      "type TrackCall",
      "type TrackMessage",
      "type UrlResult",
      "type VerdictOptions",
      "type Verification",
      "type Verified",
      "type VerifyInput",
      "type VerifyOptions",
      "value MESSAGE_TYPES",
      "value RETRY_RULES",
      "value SCHEMES",
      "value SCHEME_NAMES",
    ]);
    // What the .d.ts declares as values is what the module holds at run time, no more, no less.
    expect(declaredValues).toEqual(runtimeNames);
  });

  it('"webhook-cli/client" exports exactly these names, each the same as "webhook-cli"\'s', async () => {
    const { face, runtimeNames, declaredValues } = await exportsOf(CLIENT, ENTRIES);
    expect(face).toEqual([
      "class Analytics",
      "class BatchDeliveryError",
      "class ClosedError",
      "class ConfigError",
      "class QueueFullError",
      "class ValidationError",
      "class WebhookCliError",
      "type AliasCall",
      "type AnalyticsEvents",
      "type AnalyticsOptions",
      "type AnalyticsStats",
      "type CallType",
      "type Callback",
      "type Clock",
      "type CommonFields",
      "type ErrorCode",
      "type ErrorSource",
      "type FlushEvent",
      "type GroupCall",
      "type IdentifyCall",
      "type Identity",
      "type Integrations",
      "type PageCall",
      "type Random",
      "type ScreenCall",
      "type TimerHandle",
      "type TrackCall",
    ]);
    expect(declaredValues).toEqual(runtimeNames);
    const main = (await import(MAIN.specifier)) as Record<string, unknown>;
    const client = (await import(CLIENT.specifier)) as Record<string, unknown>;
    const mainFace = (await exportsOf(MAIN, ENTRIES)).face;
    expect(face.filter((line) => !mainFace.includes(line))).toEqual([]);
    for (const name of runtimeNames) expect(client[name], name).toBe(main[name]);
  });

  it('"webhook-cli/testing" exports exactly these names', async () => {
    const { face, runtimeNames, declaredValues } = await exportsOf(TESTING, ENTRIES);
    expect(face).toEqual([
      "class FakeTransport",
      "class VirtualClock",
      "class WaitTimeoutError",
      "function answers",
      "function byUrl",
      "function seededRandom",
      "function startReceiver",
      "type AttemptReport",
      "type BodyKind",
      "type Clock",
      "type DeliveryTransport",
      "type FakeAnswer",
      "type FakeRequest",
      "type FakeResponder",
      "type FakeTransportOptions",
      "type MatchedMessage",
      "type Random",
      "type ReceivedVerdict",
      "type ReceivedWebhook",
      "type ReceiverFaults",
      "type RequestMatch",
      "type ResponseRule",
      "type StartReceiverOptions",
      "type TestReceiver",
      "type TimerHandle",
      "type VerdictFilter",
      "type WaitOptions",
      "type WebhookMatcher",
    ]);
    expect(declaredValues).toEqual(runtimeNames);
  });

  it("every table of values an entry exports is frozen all the way down", async () => {
    const frozen = (value: unknown): boolean => typeof value !== "object" || value === null || (Object.isFrozen(value) && Object.values(value).every(frozen));
    for (const entry of ENTRIES) {
      const module = (await import(entry.specifier)) as Record<string, unknown>;
      const { face } = await exportsOf(entry, ENTRIES);
      const values = face.filter((line) => line.startsWith("value ")).map((line) => line.slice("value ".length));
      for (const name of values) expect(frozen(module[name]), `${entry.specifier}: ${name}`).toBe(true);
    }
    // The check can fail: an array inside a frozen object is not frozen by the object's freeze.
    expect(frozen(Object.freeze({ list: [1] }))).toBe(false);
  });

  it("every type a public signature names can be imported from one of the entries", () => {
    // Known and deliberate: the webhook message interfaces extend two unexported bases of
    // messages/schemas.ts (their members are all visible) and use its `Json` alias (an object).
    expect(unexportedTypes(ENTRIES)).toEqual(["Base", "Identity", "Json"]);
  });

  it("docs/library.md's table of each entry lists exactly its exports, each once", async () => {
    const page = readFileSync(join(ROOT, "docs/library.md"), "utf8");
    for (const entry of ENTRIES) {
      const names = (await exportsOf(entry, ENTRIES)).face.map((line) => line.slice(line.indexOf(" ") + 1));
      const listed = exportTable(page, entry.specifier);
      expect(listed.length, entry.specifier).toBeGreaterThan(10);
      expect([...listed].sort(), entry.specifier).toEqual([...new Set(listed)].sort());
      expect([...listed].sort(), entry.specifier).toEqual(names.sort());
    }
    // The check can fail: a table that names one export too many, or misses one, differs.
    expect(exportTable(page, "webhook-cli")).toContain("planNextRound");
    expect(exportTable(page, "webhook-cli")).not.toContain("startReceiver");
    expect(exportTable(page, "webhook-cli/nothing")).toEqual([]);
  });
});
