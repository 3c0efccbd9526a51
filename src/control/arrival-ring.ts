import { arrivalBytes, clipArrivalText, eventOf, isoTime, problemOf, signatureOf, type Arrival, type ArrivalSource } from "../receiver/arrivals.js";
import { BODY_KINDS, type RequestFacts } from "../receiver/match.js";
import { SCHEME_NAMES } from "../signing/schemes.js";

/*
 * The arrival log's storage: one column per field in a ring that grows by doubling up to its
 * capacity, not an object per request. Under load listen takes thousands of requests a second and
 * keeps the last 100,000: an object each survived the young generation, was copied twice and
 * later swept from the old one, which cost more CPU than answering the request. Numbers and
 * enums go in typed arrays; texts in arrays of strings, each text seen before stored as the one
 * copy already kept (paths, events and user ids repeat), so a request leaves nothing new behind.
 */

const SIGNATURES: readonly Arrival["signature"][] = ["ok", "failed", "unsigned"];
const FAULTS: readonly Arrival["fault"][] = [null, "timeout", "drop"];
/** The scheme column: 0 for none, else 1 + its place in the table. */
const SCHEMES_BY_CODE: readonly Arrival["scheme"][] = [null, ...SCHEME_NAMES];
const FIRST_CAPACITY = 1024;
/** Distinct texts a column remembers; past it, it starts over (what is stored stays as it is). */
const MAX_REMEMBERED = 1024;

/** The one copy of each text seen lately. */
class Texts {
  private readonly seen = new Map<string, string>();
  /** The text kept last: a burst of requests mostly repeats it, and comparing costs less than hashing a new string. */
  private last: string | null = null;

  of(text: string): string;
  of(text: string | null): string | null;
  of(text: string | null): string | null {
    if (text === null) return null;
    if (text !== this.last) this.last = this.keep(text);
    return this.last;
  }

  private keep(text: string): string {
    const known = this.seen.get(text);
    if (known !== undefined) return known;
    if (this.seen.size >= MAX_REMEMBERED) this.seen.clear();
    this.seen.set(text, text);
    return text;
  }
}

/** Arrivals oldest first, at positions 0 to length - 1. */
export class ArrivalRing {
  length = 0;
  private first = 0;
  private capacity = 0;
  private index = new Float64Array(0);
  private at = new Float64Array(0);
  private bytes = new Float64Array(0);
  private status = new Int16Array(0);
  private rule = new Int32Array(0);
  /** kind (bits 0-2), valid (3), signature (4-5), fault (6-7). */
  private code = new Uint8Array(0);
  private scheme = new Uint8Array(0);
  private method: string[] = [];
  private path: string[] = [];
  private type: (string | null)[] = [];
  private event: (string | null)[] = [];
  private userId: (string | null)[] = [];
  private problem: (string | null)[] = [];
  private readonly texts = { method: new Texts(), path: new Texts(), type: new Texts(), event: new Texts(), userId: new Texts(), problem: new Texts() };

  constructor(private readonly maxCapacity: number) {}

  /** Stores an arrival at the end (the ring must have room: see `full`); returns what it counts for in bytes. */
  push(request: ArrivalSource): number {
    if (this.length === this.capacity) this.grow();
    const slot = (this.first + this.length) % this.capacity;
    const v = request.verdict;
    const { texts } = this;
    const path = texts.path.of(clipArrivalText(request.path));
    const event = texts.event.of(eventOf(v));
    const userId = texts.userId.of(v.userId !== undefined ? clipArrivalText(v.userId) : null);
    const problem = texts.problem.of(problemOf(v));
    const bytes = arrivalBytes({ path, event, userId, problem });
    this.index[slot] = request.index;
    this.at[slot] = request.receivedAt.getTime();
    this.bytes[slot] = bytes;
    this.status[slot] = request.status ?? -1;
    this.rule[slot] = request.rule ?? -1;
    this.code[slot] = BODY_KINDS.indexOf(v.bodyKind) | (v.valid ? 8 : 0) | (SIGNATURES.indexOf(signatureOf(v)) << 4) | (FAULTS.indexOf(request.fault) << 6);
    this.scheme[slot] = SCHEMES_BY_CODE.indexOf(v.signatureScheme ?? null);
    this.method[slot] = texts.method.of(request.method);
    this.path[slot] = path;
    this.type[slot] = texts.type.of(v.type ?? null);
    this.event[slot] = event;
    this.userId[slot] = userId;
    this.problem[slot] = problem;
    this.length += 1;
    return bytes;
  }

  /** No room for one more without dropping the oldest. */
  get full(): boolean {
    return this.length >= this.maxCapacity;
  }

  /** Forgets the oldest; returns its time and what it counted for in bytes. */
  shift(): { at: number; bytes: number } {
    const slot = this.first;
    const dropped = { at: this.at[slot] as number, bytes: this.bytes[slot] as number };
    // Its texts are let go now, not when the slot is next written.
    this.path[slot] = this.event[slot] = this.userId[slot] = this.problem[slot] = "";
    this.first = (slot + 1) % this.capacity;
    this.length -= 1;
    return dropped;
  }

  atOf(position: number): number {
    return this.at[this.slot(position)] as number;
  }

  /** The facts a matcher compares, written into `into` (one object reused for a whole scan). */
  factsOf(position: number, into: RequestFacts): RequestFacts {
    const slot = this.slot(position);
    const code = this.code[slot] as number;
    into.method = this.method[slot] as string;
    into.path = this.path[slot] as string;
    into.kind = BODY_KINDS[code & 7] as RequestFacts["kind"];
    into.type = this.type[slot] as RequestFacts["type"];
    into.event = this.event[slot] as string | null;
    into.userId = this.userId[slot] as string | null;
    into.valid = (code & 8) !== 0;
    return into;
  }

  /** The arrival at `position`, as arrivalOf made it when it came. */
  arrival(position: number): Arrival {
    const slot = this.slot(position);
    const code = this.code[slot] as number;
    const status = this.status[slot] as number;
    const rule = this.rule[slot] as number;
    return {
      index: this.index[slot] as number,
      receivedAt: isoTime(this.at[slot] as number),
      method: this.method[slot] as string,
      path: this.path[slot] as string,
      kind: BODY_KINDS[code & 7] as Arrival["kind"],
      type: this.type[slot] as Arrival["type"],
      event: this.event[slot] as string | null,
      userId: this.userId[slot] as string | null,
      valid: (code & 8) !== 0,
      signature: SIGNATURES[(code >> 4) & 3] as Arrival["signature"],
      scheme: SCHEMES_BY_CODE[this.scheme[slot] as number] ?? null,
      problem: this.problem[slot] as string | null,
      status: status === -1 ? null : status,
      fault: FAULTS[(code >> 6) & 3] as Arrival["fault"],
      rule: rule === -1 ? null : rule,
    };
  }

  private slot(position: number): number {
    return (this.first + position) % this.capacity;
  }

  /** Doubles the columns (up to the capacity), oldest first at 0. */
  private grow(): void {
    const capacity = Math.min(this.maxCapacity, Math.max(FIRST_CAPACITY, this.capacity * 2));
    // Read through slot() before `first` and `capacity` change below.
    const typed = <T extends Float64Array | Int16Array | Int32Array | Uint8Array>(old: T, make: (n: number) => T): T => {
      const next = make(capacity);
      for (let i = 0; i < this.length; i++) next[i] = old[this.slot(i)] as number;
      return next;
    };
    const texts = <T>(old: T[]): T[] => {
      const next = new Array<T>(capacity);
      for (let i = 0; i < this.length; i++) next[i] = old[this.slot(i)] as T;
      return next;
    };
    this.index = typed(this.index, (n) => new Float64Array(n));
    this.at = typed(this.at, (n) => new Float64Array(n));
    this.bytes = typed(this.bytes, (n) => new Float64Array(n));
    this.status = typed(this.status, (n) => new Int16Array(n));
    this.rule = typed(this.rule, (n) => new Int32Array(n));
    this.code = typed(this.code, (n) => new Uint8Array(n));
    this.scheme = typed(this.scheme, (n) => new Uint8Array(n));
    this.method = texts(this.method);
    this.path = texts(this.path);
    this.type = texts(this.type);
    this.event = texts(this.event);
    this.userId = texts(this.userId);
    this.problem = texts(this.problem);
    this.first = 0;
    this.capacity = capacity;
  }
}
