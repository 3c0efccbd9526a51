import { randomFillSync } from "node:crypto";
import {
  derivedMessageId,
  messageId,
  SCHEMES,
  schemeKeys,
  signRequest,
  usableMessageId,
  type Scheme,
  type SchemeKey,
  type SchemeName,
} from "../signing/index.js";
import { sign, signingKey, type SecretKey } from "../signing/x-signature.js";
import type { RequestContent } from "./actions-request.js";
import type { DeliverCall } from "./types.js";

/** The headers a request is signed with, and the URL it goes to when the scheme signs one (Twilio: `bodySHA256` added). */
export interface Signature {
  headers: readonly (readonly [name: string, value: string])[];
  url: string | undefined;
}

/**
 * What one message keeps across its retries and re-sends (docs/schemes.md#timestamps): an id it was
 * sent under before (kept when the scheme can carry it), its own `messageId` (the id is derived from
 * it, so a re-send keeps it), the event header's value (GitHub's X-GitHub-Event: its type).
 */
export type MessageIdentity = NonNullable<DeliverCall["identity"]>;

/**
 * The engine's signing (docs/schemes.md): the secrets as each scheme's keys, made once; a request's
 * signature headers by its target's scheme through THE signer (signing/sign.ts). X-Signature keeps
 * its own fast path and its rule (a Webhooks (Actions) batch: element 0 only); every other scheme
 * signs the whole body, as its senders do. A secret a scheme in use cannot take is a
 * SecretFormatError here, when the engine is built: nothing has been sent.
 */
export class RequestSigner {
  private readonly keys = new Map<SchemeName, SchemeKey[]>();
  private readonly xKey: SecretKey | undefined;

  constructor(
    readonly secrets: readonly string[],
    schemes: Iterable<SchemeName>,
    private readonly randomBytes: (size: number) => Uint8Array = pooledRandomBytes,
  ) {
    this.xKey = secrets[0] === undefined ? undefined : signingKey(secrets[0]);
    if (secrets.length === 0) return;
    for (const name of schemes) if (name !== "default") this.keysOf(SCHEMES[name]);
  }

  /** A scheme's keys, made once: here for the schemes the targets name, else on first use (a message's own targets). */
  private keysOf(scheme: Scheme): SchemeKey[] {
    let keys = this.keys.get(scheme.name);
    if (keys === undefined) {
      keys = schemeKeys(scheme, this.secrets);
      this.keys.set(scheme.name, keys);
    }
    return keys;
  }

  /** Whether a signature by `scheme` must be made again for each attempt: it signs a timestamp, which must be fresh. */
  static renewsPerAttempt(scheme: SchemeName): boolean {
    return SCHEMES[scheme].timestamp !== undefined;
  }

  /** Whether `scheme` signs the URL a request goes to (Twilio): each target's signature is its own. */
  static signsUrl(scheme: SchemeName): boolean {
    return SCHEMES[scheme].content === "url+form";
  }

  /** The id `scheme` sends for a message: the one it had when usable, else derived from its seed, else new. */
  idFor(scheme: SchemeName, identity: MessageIdentity): string {
    const entry = SCHEMES[scheme];
    if (!entry.id) return "";
    if (identity.id !== undefined && usableMessageId(entry, identity.id)) return identity.id;
    return identity.seed !== undefined ? derivedMessageId(entry, identity.seed) : messageId(entry, this.randomBytes);
  }

  /**
   * The signature of one request to `url` by `scheme` at `nowMs`, or undefined without a secret (or
   * for X-Signature, a request the destination sends unsigned). `id` is the message's (idFor).
   */
  sign(scheme: SchemeName, content: RequestContent, url: string, id: string, event: string | undefined, nowMs: number): Signature | undefined {
    if (this.xKey === undefined) return undefined;
    if (scheme === "default") return content.signed === undefined ? undefined : { headers: [["X-Signature", sign(this.xKey, content.signed)]], url: undefined };
    const entry: Scheme = SCHEMES[scheme];
    return signRequest(entry, this.keysOf(entry), {
      body: content.body ?? EMPTY,
      timestamp: Math.floor(nowMs / 1000),
      id,
      // A URL-signing scheme signs the URL as it goes on the wire (`http://host` is sent as `http://host/`).
      url: entry.content === "url+form" ? new URL(url).href : url,
      contentType: content.body === undefined ? undefined : "application/json",
      event: entry.event === undefined || event === undefined ? undefined : event,
    });
  }
}

const EMPTY = Buffer.alloc(0);

// Random bytes drawn 4 KiB at a time: one system call per 256 new ids, not one per id (a replay
// makes an id per message; node:crypto's randomBytes(16) costs several microseconds a call).
const POOL = Buffer.alloc(4096);
let poolUsed = POOL.length;

function pooledRandomBytes(size: number): Uint8Array {
  if (size > POOL.length) return randomFillSync(Buffer.alloc(size));
  if (poolUsed + size > POOL.length) {
    randomFillSync(POOL);
    poolUsed = 0;
  }
  poolUsed += size;
  // A copy: the pool is refilled under it later.
  return Buffer.from(POOL.subarray(poolUsed - size, poolUsed));
}
