import fc from 'fast-check';
import { stableStringify } from '../../../kube/stable-stringify.js';

/**
 * What the digests stored in applied-digest annotations were computed with before stableStringify
 * was written out: the same bytes for the same value, or every object would be applied once more.
 */
const sortingReplacer = (value: unknown): string =>
  JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );

describe('stableStringify', () => {
  it('when two objects differ only in key order, then they are written the same, keys sorted', () => {
    expect(stableStringify({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[2,{"e":0,"f":1}]},"b":1}',
    );
    expect(stableStringify({ b: 1, a: 2 })).toBe(stableStringify({ a: 2, b: 1 }));
  });

  it('when keys are array indices, then they come first in numeric order, as the stored digests have them', () => {
    expect(stableStringify({ b: 1, '10': 2, '9': 3, '01': 4 })).toBe('{"9":3,"10":2,"01":4,"b":1}');
  });

  it('when any JSON-like value is written, then the bytes equal the sorting replacer', () => {
    fc.assert(
      fc.property(
        fc.anything({
          withDate: true,
          withNullPrototype: true,
          withSparseArray: true,
          withUnicodeString: true,
        }),
        (value) => stableStringify(value) === sortingReplacer(value),
      ),
      { numRuns: 300 },
    );
    for (const value of [undefined, () => 1, [undefined, () => 1], { a: undefined, n: NaN }, new Date(0)])
      expect(stableStringify(value)).toBe(sortingReplacer(value));
  });
});
