import { unreadVerdict, type RequestVerdict } from "./verdict.js";

/**
 * Whether a request-target is in origin-form (`/path?query`, RFC 9112 3.2.1), the only form a
 * receiver that is not a proxy is sent. Node also passes on `*`, the absolute-form
 * (`http://other/x`) and targets such as `*@127.0.0.1:9/x`: glued to listen's URL, those name
 * another host, so listen refuses them.
 */
export function isOriginForm(target: string): boolean {
  return target.startsWith("/");
}

export const NOT_ORIGIN_FORM = "the request-target must be a path starting with / (origin-form); listen is not a proxy";

/** The verdict of a request refused for its request-target: invalid, shown and counted like a wrong method. */
export function notOriginFormVerdict(): RequestVerdict {
  return unreadVerdict(0, "(request-target)", NOT_ORIGIN_FORM);
}
