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
