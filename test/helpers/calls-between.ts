/**
 * The calls of each kind made between two readings of running totals (Redis's `commandCalls`, the
 * API server's `apiserverRequestCounts`), those in `ignore` left out. Shared by benchmarks and tests.
 */
export function callsBetween(
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
  ignore: RegExp,
): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [name, count] of after) {
    const diff = count - (before.get(name) ?? 0);
    if (diff > 0 && !ignore.test(name)) delta.set(name, diff);
  }
  return delta;
}
