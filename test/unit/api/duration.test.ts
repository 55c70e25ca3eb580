import { InvalidDurationError, parseDuration } from '../../../api/duration.js';

describe('durations', () => {
  it('when Go-style durations are parsed, then they give milliseconds', () => {
    expect(parseDuration('10s')).toBe(10_000);
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('250ms')).toBe(250);
  });

  it('when a value is not a duration, then InvalidDurationError is thrown', () => {
    expect(() => parseDuration('10')).toThrow(InvalidDurationError);
    expect(() => parseDuration('1d')).toThrow(InvalidDurationError);
  });
});
