import {
  durationPattern,
  ENV_DURATION,
  InvalidDurationError,
  isDuration,
  KUBERNETES_DURATION,
  parseDuration,
  QSTASH_DURATION,
  readDuration,
} from '../../../api/duration.js';

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

describe('one duration parser, read as each caller takes it', () => {
  /** Each input, and what each caller's syntax makes of it (undefined: refused). */
  const CASES: [string, { kubernetes?: number; qstash?: number; env?: number }][] = [
    ['10s', { kubernetes: 10_000, qstash: 10_000, env: 10_000 }],
    ['1h30m', { kubernetes: 5_400_000, qstash: 5_400_000, env: 5_400_000 }],
    ['250ms', { kubernetes: 250, qstash: 250, env: 250 }],
    ['1.5s', { env: 1_500 }],
    ['0.25s', { env: 250 }],
    ['2d', { qstash: 172_800_000 }],
    ['30', { qstash: 30_000 }],
    [' 10s ', { qstash: 10_000, env: 10_000 }],
    ['', {}],
    ['s', {}],
    ['-1s', {}],
    ['1.5', {}],
    ['10 s', {}],
  ];

  it.each(CASES)('when %j is read, then each caller accepts exactly what it accepted before', (input, ms) => {
    expect({
      kubernetes: readDuration(input, KUBERNETES_DURATION),
      qstash: readDuration(input, QSTASH_DURATION),
      env: readDuration(input, ENV_DURATION),
    }).toEqual({ kubernetes: ms.kubernetes, qstash: ms.qstash, env: ms.env });
    expect(isDuration(input)).toBe(ms.kubernetes !== undefined);
    expect(new RegExp(durationPattern(QSTASH_DURATION)).test(input.trim())).toBe(ms.qstash !== undefined);
  });

  it('when the patterns are rendered into the CRDs, then they are the ones the schemas always had', () => {
    expect(durationPattern(KUBERNETES_DURATION)).toBe('^([0-9]+(ms|s|m|h))+$');
    expect(durationPattern(QSTASH_DURATION)).toBe('^([0-9]+|([0-9]+(ms|s|m|h|d))+)$');
  });
});
