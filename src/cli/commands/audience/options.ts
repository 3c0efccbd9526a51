import { DELIVERY_OPTIONS } from "../../options/delivery.js";
import { withHelp, type OptionsOf, type OptionSpec } from "../../options/spec.js";

const AUDIENCE_CONCURRENCY_DEFAULT = "8";

export const AUDIENCE_SYNC_OPTIONS = [
  {
    key: "name",
    flag: "--name",
    arg: "<name>",
    kind: "string",
    required: true,
    help: "audience name; the trait is its snake_case form (VIP-Users 2024 → vip_users_2024)",
  },
  { key: "members", flag: "--members", arg: "<file>", kind: "string", required: true, help: "current members: one user ID per line, or a JSON array of IDs" },
  { key: "state", flag: "--state", arg: "<file>", kind: "string", required: true, help: "JSON file recording what was delivered (created on the first sync)" },
  ...withHelp(DELIVERY_OPTIONS, { timeoutMs: "deadline per attempt" }),
  {
    key: "concurrency",
    flag: "--concurrency",
    short: "-c",
    arg: "<n>",
    kind: "integer",
    min: 1,
    max: 256,
    shownDefault: AUDIENCE_CONCURRENCY_DEFAULT,
    help: "identify messages in flight at once; lower than replay's 64 because a sync goes to a live endpoint in one burst per run",
  },
  { key: "json", flag: "--json", kind: "switch", help: "one JSON object per change on stdout, then a summary" },
] as const satisfies readonly OptionSpec[];

export type AudienceSyncFlags = OptionsOf<typeof AUDIENCE_SYNC_OPTIONS>;
