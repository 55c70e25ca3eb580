import { medianSpread, medianSpreadText, minMax, quantile, spread } from '../../../bench/lib/stats.js';

describe('bench statistics', () => {
  const values = [3.14159, 1.5, 10.26, 2.75];

  it('when rounds are summed up, then the spread is their lowest and highest, rounded', () => {
    expect(minMax(values, 1)).toEqual([1.5, 10.3]);
    expect(spread(values)).toBe('1.5-10.3');
    expect(spread(values, 0)).toBe('2-10');
  });

  it('when a median stands with its spread, then both are rounded alike', () => {
    expect(medianSpread(values, 2)).toEqual({ median: 2.75, spread: [1.5, 10.26] });
    expect(medianSpreadText(values, 0)).toBe('3 (2-10)');
  });

  it('when a quantile is read, then it is the nearest rank', () => {
    expect(quantile([5, 1, 4, 2, 3], 0.99)).toBe(5);
    expect(quantile([], 0.5)).toBeNaN();
  });
});
