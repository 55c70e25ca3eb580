import {
  InvalidRetryDelayError,
  parseRetryDelayExpression,
} from '../../../../gateway/queue/core/retry-delay-expression.js';

const at = (source: string, retried: number): number => parseRetryDelayExpression(source).evaluate(retried);

describe('Upstash-Retry-Delay expressions', () => {
  it("when QStash's documented examples are evaluated, then they give its delays", () => {
    expect([0, 1, 2, 3].map((n) => at('1000', n))).toEqual([1000, 1000, 1000, 1000]);
    expect([0, 1, 2, 3].map((n) => at('1000 * (1 + retried)', n))).toEqual([1000, 2000, 3000, 4000]);
    expect([0, 1, 2, 3].map((n) => at('pow(2, retried) * 1000', n))).toEqual([1000, 2000, 4000, 8000]);
    expect([0, 1, 5].map((n) => at('max(1000, pow(2, retried) * 100)', n))).toEqual([1000, 1000, 3200]);
  });

  it('when every supported function and operator is used, then each computes as in Math', () => {
    expect(at('sqrt(16) + abs(0 - 3) + floor(2.7) + ceil(2.1) + round(2.5)', 0)).toBe(4 + 3 + 2 + 3 + 3);
    expect(at('exp(0) + min(5, 2, 9) + max(1, 7) + 10 % 4 - 6 / 3', 0)).toBe(1 + 2 + 7 + 2 - 2);
    expect(at('-retried + +2', 3)).toBe(-1);
    expect(at('2 * (3 + 4)', 0)).toBe(14);
    expect(at('1.5e3', 0)).toBe(1500);
  });

  it('when an expression is malformed, then parsing fails with InvalidRetryDelayError', () => {
    for (const source of [
      '',
      '   ',
      'pow(2,',
      '1 +',
      'retried retried',
      '2 ** 3',
      'process.exit(1)',
      'sqrt(1, 2)',
      'pow(2)',
      'foo(1)',
      'constructor(1)',
      '(1',
      '1)',
    ]) {
      expect(() => parseRetryDelayExpression(source)).toThrow(InvalidRetryDelayError);
    }
  });

  it('when an expression is longer than the limit, then it is refused', () => {
    expect(() => parseRetryDelayExpression(`1${' + 1'.repeat(100)}`)).toThrow(/longer than/);
  });
});
