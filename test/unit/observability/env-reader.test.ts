import { ConfigError, EnvReader } from '../../../observability/env-reader.js';

function problemsOf(read: EnvReader): readonly string[] {
  try {
    read.assertValid();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('the environment reader', () => {
  it('when a positive number is a fraction, then it is read', () => {
    const read = new EnvReader({ SCALE: ' 0.25 ' });
    expect(read.positiveNumber('SCALE', 1)).toBe(0.25);
    expect(read.positiveNumber('UNSET', 1)).toBe(1);
    expect(problemsOf(read)).toEqual([]);
  });

  it.each(['0', '-2', 'Infinity', 'half'])(
    'when a positive number is %s, then the fallback is used and the problem recorded',
    (text) => {
      const read = new EnvReader({ SCALE: text });
      expect(read.positiveNumber('SCALE', 1)).toBe(1);
      expect(problemsOf(read)).toEqual([`SCALE=${text}: expected a positive number`]);
    },
  );

  it('when a CIDR list holds IPv4 and IPv6 ranges with spaces and empty items, then the ranges are read', () => {
    const read = new EnvReader({ RANGES: ' 10.0.0.0/8, ,fd00::/8,' });
    expect(read.cidrList('RANGES')).toEqual(['10.0.0.0/8', 'fd00::/8']);
    expect(read.cidrList('UNSET')).toEqual([]);
    expect(problemsOf(read)).toEqual([]);
  });

  it('when a CIDR list holds malformed ranges, then each is its own problem and no range is kept', () => {
    const read = new EnvReader({ RANGES: '10.0.0.0/8,10/8,127.0.0.1' });
    expect(read.cidrList('RANGES')).toEqual([]);
    expect(problemsOf(read)).toEqual([
      'RANGES: "10/8" is not a CIDR range such as 10.0.0.0/8 or fd00::/8',
      'RANGES: "127.0.0.1" is not a CIDR range such as 10.0.0.0/8 or fd00::/8',
    ]);
  });
});
