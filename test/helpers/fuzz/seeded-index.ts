/**
 * A deterministic index generator for the differential tests' generated cases: the same seed gives
 * the same cases in every run, so a mismatch found once can be read again. Each call returns an
 * integer in [0, n).
 */
export function seededIndex(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return (state >>> 16) % n;
  };
}
