/**
 * `value` frozen all the way down, returned. For the tables the package exports (RETRY_RULES,
 * SCHEMES, MESSAGE_TYPES): a user's write to one must not change what the engine or the verifier does.
 */
export function deepFrozen<T extends object>(value: T): T {
  for (const inner of Object.values(value)) if (typeof inner === "object" && inner !== null && !Object.isFrozen(inner)) deepFrozen(inner);
  return Object.freeze(value);
}
