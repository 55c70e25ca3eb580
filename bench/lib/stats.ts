/** Small statistics for benchmark reports. */

export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/** The value at quantile `q` (0..1) by nearest rank. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  return quantileOfSorted(
    [...values].sort((a, b) => a - b),
    q,
  );
}

/** `quantile` on values already sorted ascending, for callers that read several quantiles of one large sample. */
export function quantileOfSorted(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}

export const round = (value: number, digits = 0): number => Number(value.toFixed(digits));

/** The lowest and the highest of `values`, rounded to `digits`. */
export const minMax = (values: readonly number[], digits = 0): [number, number] => [
  round(Math.min(...values), digits),
  round(Math.max(...values), digits),
];

/** The lowest and the highest of `values`, as "low-high", to stand beside their median. */
export const spread = (values: readonly number[], digits = 1): string => minMax(values, digits).join('-');

export interface MedianSpread {
  median: number;
  /** The lowest and the highest value. */
  spread: [number, number];
}

/** The median of `values` and their lowest and highest, rounded to `digits`. */
export const medianSpread = (values: readonly number[], digits = 0): MedianSpread => ({
  median: round(median(values), digits),
  spread: minMax(values, digits),
});

/** The median of `values` with their spread beside it, as "median (low-high)". */
export const medianSpreadText = (values: readonly number[], digits = 1): string =>
  `${round(median(values), digits)} (${spread(values, digits)})`;
