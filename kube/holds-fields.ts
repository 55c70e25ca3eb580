/**
 * Whether every field `desired` sets has the same value in `current`: then a server-side apply of
 * `desired` changes none of them. Objects are compared key by key (`current` may hold more: the
 * API server's defaults, other writers' fields), arrays item by item and of the same length,
 * anything else by ===. A field the cache trimmed from `current` (a StatefulSet's pod template:
 * cache-trims.ts) is missing, so it does not hold.
 */
export function holdsFields(current: unknown, desired: unknown): boolean {
  if (Array.isArray(desired))
    return (
      Array.isArray(current) &&
      current.length === desired.length &&
      desired.every((item, i) => holdsFields(current[i], item))
    );
  if (typeof desired === 'object' && desired !== null) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return false;
    const held = current as Record<string, unknown>;
    return Object.entries(desired).every(
      ([key, value]) => value === undefined || holdsFields(held[key], value),
    );
  }
  return current === desired;
}
