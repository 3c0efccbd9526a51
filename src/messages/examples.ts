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
  const timestamp = (options.now ?? new Date()).toISOString();
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const id = (prefix: string): string => `${prefix}_${Math.floor(random() * 36 ** 8).toString(36).padStart(8, "0")}`;
  const userId = options.userId ?? id("user");
  const first = pick(FIRST);
  const last = pick(LAST);

  return types.map((type): Message => {
    switch (type) {
      case "page": {
        const page = pick(PAGES);
        return {
          version: 1,
          type,
          userId,
          properties: options.properties ?? {
            path: page.path,
            referrer: "https://www.google.com/",
            title: page.title,
            url: `https://www.example.com${page.path}`,
          },
          timestamp,
        };
      }
      case "screen": {
        const device = pick(DEVICES);
        return {
          version: 1,
          type,
          userId,
          name: pick(["Home", "Cart", "Settings", "Order Confirmation"]),
          timestamp,
          context: {
            device: { model: device.model, type: device.type },
            os: { ...device.os },
            app: { build: String(100 + Math.floor(random() * 900)), name: "Example Shop", version: "3.2.1" },
          },
        };
      }
      case "identify":
        return {
          version: 1,
          type,
          userId,
          traits: options.traits ?? {
            name: `${first} ${last}`,
            email: `${first}.${last}@example.com`.toLowerCase(),
            plan: pick(["free", "team", "enterprise"]),
            logins: 1 + Math.floor(random() * 50),
          },
          timestamp,
        };
      case "track":
        return {
          version: 1,
          type,
          userId,
          event: options.event ?? pick(EVENTS),
          properties: options.properties ?? {
            orderId: id("order"),
            revenue: Math.round(random() * 20_000) / 100,
            currency: "USD",
            products: [{ sku: id("sku"), quantity: 1 + Math.floor(random() * 3) }],
          },
          timestamp,
        };
      case "alias": {
        const previousId = id("anon");
        return options.aliasKeys === "camel"
          ? { version: 1, type, previousId, userId, timestamp }
          : { version: 1, type, "Previous ID": previousId, "User ID": userId, timestamp };
      }
      case "group": {
        const company = pick(COMPANIES);
        return {
          version: 1,
          type,
          groupId: id("group"),
          userId,
          traits: options.traits ?? { name: company, industry: "Technology", employees: 10 + Math.floor(random() * 990) },
          timestamp,
        };
      }
      case "delete":
        return { type, userId, timestamp };
    }
  });
}


