import { UsageError } from "../errors.js";
import { MESSAGE_TYPES, isMessageType, type MessageType } from "../messages/names.js";
import { closestName } from "../util/suggest.js";
import { createForwarder, type ForwardRequest, type ForwardResult, type Forwarder } from "./forward.js";
import type { RequestVerdict } from "./verdict.js";

/**
 * listen's routing (docs/receiver.md#routing): `--forward-to [TYPE=]URL`, repeatable. A message
 * of a routed type goes to its type's URL; any other request (another type, a batch, a mapped
 * payload, a body that is no message) to the default, the one URL given without a type. Without
 * a default such a request is answered by listen itself, as without --forward-to.
 */
export interface ForwardRoutes {
  /** The URL given without a type, or null. */
  fallback: string | null;
  /** One URL per routed message type, in the order given. */
  byType: Partial<Record<MessageType, string>>;
}

/** What routing needs of a request: what its body is and, for a message, its type. */
export type Routed = Pick<RequestVerdict, "bodyKind" | "type">;

const TYPED = /^([A-Za-z][A-Za-z0-9_-]*)=(.*)$/s;

/**
 * Reads the `--forward-to` values: `TYPE=URL` when TYPE is one of the seven message types, else
 * the whole value is a URL (so `http://…?a=b` stays one). Two defaults, or two URLs for one type,
 * are refused, naming both.
 */
export function parseForwardRoutes(values: readonly string[]): ForwardRoutes {
  const routes: ForwardRoutes = { fallback: null, byType: {} };
  for (const value of values) {
    const typed = TYPED.exec(value);
    const name = typed?.[1];
    if (typed && name !== undefined && isMessageType(name)) {
      const url = typed[2] as string;
      const earlier = routes.byType[name];
      if (earlier !== undefined) throw new UsageError(`${name} is routed twice: ${earlier} and ${url}; give one URL per message type`, { field: "forwardTo" });
      routes.byType[name] = url;
      continue;
    }
    // `trak=http://…` or `Track=…` is a mistyped type, not a URL: say so rather than "not a valid URL".
    const near = name !== undefined && !URL.canParse(value) ? mistypedType(name) : undefined;
    if (near !== undefined)
      throw new UsageError(`"${name}" in "${value}" is not a message type (did you mean ${near}?): TYPE is one of ${MESSAGE_TYPES.join(", ")}`, {
        field: "forwardTo",
      });
    if (routes.fallback !== null)
      throw new UsageError(`two URLs without a type: ${routes.fallback} and ${value}; give one default, and TYPE=URL for the others (e.g. track=${value})`, {
        field: "forwardTo",
      });
    routes.fallback = value;
  }
  return routes;
}

function mistypedType(name: string): MessageType | undefined {
  const lower = name.toLowerCase();
  return isMessageType(lower) ? lower : (closestName(name, MESSAGE_TYPES) as MessageType | undefined);
}

/** The URL a request goes to, or null when listen answers it itself. Pure. */
export function routeFor(routes: ForwardRoutes, request: Routed): string | null {
  if (request.bodyKind === "message" && request.type !== undefined) {
    const typed = routes.byType[request.type];
    if (typed !== undefined) return typed;
  }
  return routes.fallback;
}

/** Whether any URL is routed at all. */
export function hasRoutes(routes: ForwardRoutes): boolean {
  return routes.fallback !== null || Object.keys(routes.byType).length > 0;
}

export type ForwardFunction = (request: ForwardRequest) => Promise<ForwardResult>;

/** The relays of a routing: one forwarder per distinct URL. */
export interface Router {
  /** The routes as shown: each URL as parsed (one with user:password@ is refused). */
  readonly shown: ForwardRoutes;
  /** The relay for a request, or undefined when listen answers it itself. */
  route(request: Routed): ForwardFunction | undefined;
  close(): Promise<void>;
}

/** Opens one forwarder per distinct URL of `routes` (each checked as an http(s) URL). */
export function createRouter(routes: ForwardRoutes, options: { timeoutMs?: number | undefined } = {}): Router {
  const forwarders = new Map<string, Forwarder>();
  const open = (url: string): Forwarder => {
    let forwarder = forwarders.get(url);
    if (forwarder === undefined) {
      forwarder = createForwarder(url, options);
      forwarders.set(url, forwarder);
    }
    return forwarder;
  };
  const shown: ForwardRoutes = { fallback: null, byType: {} };
  try {
    for (const [type, url] of Object.entries(routes.byType) as [MessageType, string][]) shown.byType[type] = open(url).url;
    if (routes.fallback !== null) shown.fallback = open(routes.fallback).url;
  } catch (error) {
    for (const forwarder of forwarders.values()) void forwarder.close();
    throw error;
  }
  return {
    shown,
    route(request) {
      const url = routeFor(routes, request);
      return url === null ? undefined : forwarders.get(url)?.forward;
    },
    async close() {
      await Promise.all([...forwarders.values()].map((forwarder) => forwarder.close()));
    },
  };
}
