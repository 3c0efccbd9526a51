/** Valid messages of three types, distinct users and timestamps, for send tests. */
export const TRACK = { version: 1, type: "track", userId: "u_1", event: "Signed Up", properties: { plan: "pro" }, timestamp: "2024-01-01T00:00:00.000Z" };
export const IDENTIFY = { version: 1, type: "identify", userId: "u_2", traits: { name: "Ada" }, timestamp: "2024-01-01T00:00:01.000Z" };
export const PAGE = { version: 1, type: "page", userId: "u_3", properties: { path: "/" }, timestamp: "2024-01-01T00:00:02.000Z" };
