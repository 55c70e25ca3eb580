/**
 * Kubernetes resource quantities ("500m", "1Gi", "1e3") as numbers, so the operator can compare them
 * the way the API server's CEL `quantity()` does.
 */

const BINARY_SUFFIXES: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const DECIMAL_SUFFIXES: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** The same grammar as the API server's, minus nothing a tenant would write. */
export const QUANTITY_PATTERN =
  '^[+]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(([KMGTPE]i)|[numkMGTPE]|[eE][+-]?[0-9]+)?$';
const QUANTITY_REGEX = new RegExp(QUANTITY_PATTERN);

export class InvalidQuantityError extends Error {
  readonly code = 'InvalidQuantity';
  constructor(readonly value: string) {
    super(`${JSON.stringify(value)} is not a Kubernetes quantity (such as 500m, 256Mi or 1Gi)`);
    this.name = 'InvalidQuantityError';
  }
}

export function isQuantity(value: string): boolean {
  return QUANTITY_REGEX.test(value);
}

/** The quantity's value in base units (bytes, cores). Throws InvalidQuantityError. */
export function parseQuantity(value: string): number {
  if (!QUANTITY_REGEX.test(value)) throw new InvalidQuantityError(value);
  const match = /^[+]?([0-9]*\.?[0-9]*)(.*)$/.exec(value);
  const number = Number(match?.[1]);
  const suffix = match?.[2] ?? '';
  if (/^[eE]/.test(suffix)) return number * 10 ** Number(suffix.slice(1));
  const multiplier = BINARY_SUFFIXES[suffix] ?? DECIMAL_SUFFIXES[suffix];
  if (multiplier === undefined) throw new InvalidQuantityError(value);
  return number * multiplier;
}

export function compareQuantities(a: string, b: string): number {
  return Math.sign(parseQuantity(a) - parseQuantity(b));
}
