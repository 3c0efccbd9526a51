import { isPlainObject } from "../json/parse.js";

/**
 * Which clients reached serve, and where: requests counted by route (a fixed
 * label, never the path as sent) and by client library (`context.library.name`,
 * which every official client sets), and the requests refused for their write
 * key by the client that sent them. Names come from the clients, so each map
 * is bounded: past `MAX_NAMES` distinct names the rest count as `other`.
 */

const MAX_NAMES = 64;
const MAX_NAME_CHARS = 80;
const OTHER = "other";
/** A request whose calls name no library (curl, a hand-written client). */
export const UNKNOWN_LIBRARY = "unknown";

export interface TrafficCounts {
  /** Requests by route label (`/v1/t`, `/v1/batch`, `/v1/m`, `/v1/projects/{writeKey}/settings`…). */
  routes: Record<string, number>;
  /** Ingest requests by client library (the first call's `context.library.name`). */
  libraries: Record<string, number>;
  /** Requests refused with 401 (a wrong or missing write key), by the client that sent them. */
  unauthorized: Record<string, number>;
}

export class Traffic {
  private readonly routes = new Map<string, number>();
  private readonly libraries = new Map<string, number>();
  private readonly unauthorized = new Map<string, number>();

  route(label: string): void {
    bump(this.routes, label);
  }

  library(name: string): void {
    bump(this.libraries, name);
  }

  refused(client: string): void {
    bump(this.unauthorized, client);
  }

  counts(): TrafficCounts {
    return { routes: Object.fromEntries(this.routes), libraries: Object.fromEntries(this.libraries), unauthorized: Object.fromEntries(this.unauthorized) };
  }
}

function bump(map: Map<string, number>, name: string): void {
  const key = map.has(name) || map.size < MAX_NAMES ? name : OTHER;
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** `context.library` of a request body: the batch's own context, else its first call's, else a single call's. */
export function libraryOf(body: Record<string, unknown> | undefined): { name: string; version: string | undefined } | undefined {
  if (body === undefined) return undefined;
  const batch = body["batch"];
  const first = Array.isArray(batch) && isPlainObject(batch[0]) ? batch[0] : undefined;
  for (const holder of [body, first]) {
    const context = holder?.["context"];
    const library = isPlainObject(context) ? context["library"] : undefined;
    if (!isPlainObject(library) || typeof library["name"] !== "string" || library["name"] === "") continue;
    const version = library["version"];
    return { name: clip(library["name"]), version: typeof version === "string" ? clip(version) : undefined };
  }
  return undefined;
}

/** How a refused request's sender is named: its library and version, else its User-Agent, else its address. */
export function clientName(body: Record<string, unknown> | undefined, userAgent: string | undefined): string {
  const library = libraryOf(body);
  if (library) return library.version ? `${library.name} ${library.version}` : library.name;
  if (userAgent) return clip(userAgent);
  return "a client that names no library";
}

function clip(text: string): string {
  return text.length > MAX_NAME_CHARS ? `${text.slice(0, MAX_NAME_CHARS)}…` : text;
}
