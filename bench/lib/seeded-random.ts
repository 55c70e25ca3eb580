/** A source of numbers in [0, 1): one seeded generator, so a run can be replayed from its seed. */
export type Random = () => number;

/** mulberry32: a small seeded generator (the chaos soak's faults, the benches' bootstrap draws). */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
