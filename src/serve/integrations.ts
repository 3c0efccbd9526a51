import { isPlainObject } from "../json/parse.js";

/** The destination's name in a call's `integrations` object (docs/serve-api.md#routing). */
const DESTINATION_NAME = "Webhooks";

/**
 * Whether a call's `integrations` selects the destination (docs/serve-api.md#routing): all
 * enabled by default; `All: false` disables everything a key does not enable;
 * the destination's own key wins (`true` or an object enables, `false`
 * disables). Keys are case sensitive. Other value types are ignored, as the
 * real service's clients only send booleans and option objects.
 */
export function isDestinationEnabled(integrations: unknown, name: string = DESTINATION_NAME): boolean {
  if (!isPlainObject(integrations)) return true;
  if (Object.hasOwn(integrations, name)) {
    const own = integrations[name];
    if (own === false) return false;
    if (own === true || isPlainObject(own)) return true;
  }
  return integrations["All"] !== false;
}
