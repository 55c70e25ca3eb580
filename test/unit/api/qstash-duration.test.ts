import {
  formatQStashDuration,
  InvalidQStashDurationError,
  parseQStashDuration,
} from '../../../api/qstash-duration.js';

describe('QStash durations', () => {
  it.each([
    ['30', 30_000],
    ['0', 0],
    ['500ms', 500],
    ['10s', 10_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['2d', 172_800_000],
    ['1d2h30m', 95_400_000],
    [' 7d ', 604_800_000],
    ['168h', 604_800_000],
  ])('when %j is parsed, then it is %d ms', (text, ms) => {
    expect(parseQStashDuration(text)).toBe(ms);
  });

  it.each(['', '-5s', '1.5h', '10 s', '1w', 's', '99999999999999999999d'])(
    'when %j is parsed, then it is refused as no duration',
    (text) => {
      expect(() => parseQStashDuration(text)).toThrow(InvalidQStashDurationError);
    },
  );

  it('when milliseconds are formatted, then the shortest exact spelling comes back', () => {
    expect(formatQStashDuration(604_800_000)).toBe('7d');
    expect(formatQStashDuration(95_400_000)).toBe('1d2h30m');
    expect(formatQStashDuration(1_500)).toBe('1s500ms');
    expect(formatQStashDuration(0)).toBe('0s');
  });
});
