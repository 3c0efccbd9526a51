import { seededRandom } from "../util/clock.js";
import { MESSAGE_TYPES, type MessageType } from "./names.js";
import type { AliasKeys, Message } from "./schemas.js";

export interface ExampleOptions {
  /** The timestamp every example carries (default: now). */
  now?: Date;
  /** Seed for the random choices; the same seed and `now` give the same output. */
  seed?: number;
  userId?: string;
  event?: string;
  /** Replaces `properties` of page and track examples. */
  properties?: Record<string, unknown>;
  /** Replaces `traits` of identify and group examples. */
  traits?: Record<string, unknown>;
  aliasKeys?: AliasKeys;
}

const FIRST = ["Ada", "Grace", "Alan", "Katherine", "Linus", "Margaret", "Dennis", "Barbara"];
const LAST = ["Lovelace", "Hopper", "Turing", "Johnson", "Torvalds", "Hamilton", "Ritchie", "Liskov"];
const PAGES = [
  { path: "/pricing", title: "Pricing" },
  { path: "/docs/getting-started", title: "Getting started" },
  { path: "/blog/webhooks-at-scale", title: "Webhooks at scale" },
];
const EVENTS = ["Order Completed", "Signed Up", "Product Viewed", "Checkout Started"];
const DEVICES = [
  { model: "iPhone15,2", type: "ios", os: { name: "iOS", version: "17.4.1" } },
  { model: "Pixel 8", type: "android", os: { name: "Android", version: "14" } },
];
const COMPANIES = ["Initech", "Globex", "Umbrella", "Hooli"];

/** One realistic example of `type`. */
export function exampleMessage(type: MessageType, options: ExampleOptions = {}): Message {
  return buildExamples([type], options)[0] as Message;
}

/** Examples of the given types (all seven by default), in order, sharing one seeded sequence. */
export function buildExamples(types: readonly MessageType[] = MESSAGE_TYPES, options: ExampleOptions = {}): Message[] {
  const random = seededRandom(options.seed ?? Math.floor(Math.random() * 2 ** 32));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const id = (prefix: string): string =>
    `${prefix}_${Math.floor(random() * 36 ** 8)
      .toString(36)
      .padStart(8, "0")}`;
  const userId = options.userId ?? id("user");
  const first = pick(FIRST);
  const last = pick(LAST);
  const context: ExampleContext = { options, random, pick, id, userId, first, last, timestamp: (options.now ?? new Date()).toISOString() };
  return types.map((type) => BUILDERS[type](context));
}

/** What every example of one run shares: the options, the seeded sequence and the one user. */
interface ExampleContext {
  options: ExampleOptions;
  random: () => number;
  pick: <T>(items: readonly T[]) => T;
  id: (prefix: string) => string;
  userId: string;
  first: string;
  last: string;
  timestamp: string;
}

// Each builder draws from the shared sequence in its own order: the same seed keeps giving the same output.
const BUILDERS: Record<MessageType, (c: ExampleContext) => Message> = {
  page({ options, pick, userId, timestamp }) {
    const page = pick(PAGES);
    const properties = options.properties ?? {
      path: page.path,
      referrer: "https://www.google.com/",
      title: page.title,
      url: `https://www.example.com${page.path}`,
    };
    return { version: 1, type: "page", userId, properties, timestamp };
  },
  screen({ random, pick, userId, timestamp }) {
    const device = pick(DEVICES);
    return {
      version: 1,
      type: "screen",
      userId,
      name: pick(["Home", "Cart", "Settings", "Order Confirmation"]),
      timestamp,
      context: {
        device: { model: device.model, type: device.type },
        os: { ...device.os },
        app: { build: String(100 + Math.floor(random() * 900)), name: "Example Shop", version: "3.2.1" },
      },
    };
  },
  identify({ options, random, pick, userId, first, last, timestamp }) {
    const traits = options.traits ?? {
      name: `${first} ${last}`,
      email: `${first}.${last}@example.com`.toLowerCase(),
      plan: pick(["free", "team", "enterprise"]),
      logins: 1 + Math.floor(random() * 50),
    };
    return { version: 1, type: "identify", userId, traits, timestamp };
  },
  track({ options, random, pick, id, userId, timestamp }) {
    const event = options.event ?? pick(EVENTS);
    const properties = options.properties ?? {
      orderId: id("order"),
      revenue: Math.round(random() * 20_000) / 100,
      currency: "USD",
      products: [{ sku: id("sku"), quantity: 1 + Math.floor(random() * 3) }],
    };
    return { version: 1, type: "track", userId, event, properties, timestamp };
  },
  alias({ options, id, userId, timestamp }) {
    const previousId = id("anon");
    return options.aliasKeys === "camel"
      ? { version: 1, type: "alias", previousId, userId, timestamp }
      : { version: 1, type: "alias", "Previous ID": previousId, "User ID": userId, timestamp };
  },
  group({ options, random, pick, id, userId, timestamp }) {
    const company = pick(COMPANIES);
    const groupId = id("group");
    const traits = options.traits ?? { name: company, industry: "Technology", employees: 10 + Math.floor(random() * 990) };
    return { version: 1, type: "group", groupId, userId, traits, timestamp };
  },
  delete: ({ userId, timestamp }) => ({ type: "delete", userId, timestamp }),
};
