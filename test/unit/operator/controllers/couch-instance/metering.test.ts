import {
  accrueUsage,
  meteringDueInMs,
  type MeteringInput,
} from '../../../../../operator/controllers/couch-instance/metering.js';

const T0 = Date.parse('2026-01-01T12:00:00.000Z');
const MINUTE = 60_000;
const at = (ms: number): string => new Date(ms).toISOString();

const input = (overrides: Partial<MeteringInput>): MeteringInput => ({
  previous: {},
  spec: {},
  now: T0,
  woke: false,
  phaseChanges: false,
  intervalMs: 5 * MINUTE,
  ...overrides,
});

describe('accrueUsage', () => {
  it('when an instance is metered for the first time, then the meter starts at zero now', () => {
    expect(accrueUsage(input({}))).toEqual({
      awakeSeconds: 0,
      hibernatedSeconds: 0,
      wakes: 0,
      storageByteHours: 0,
      addonSeconds: {},
      meteredAt: at(T0),
    });
  });

  it('when less than the interval passed without a transition, then nothing is due', () => {
    const previous = { phase: 'Running' as const, usage: { meteredAt: at(T0), awakeSeconds: 10 } };
    expect(accrueUsage(input({ previous, now: T0 + MINUTE }))).toBeUndefined();
    expect(meteringDueInMs(previous.usage, T0 + MINUTE, 5 * MINUTE)).toBe(4 * MINUTE);
  });

  it('when the interval passed while running with 1 GiB stored and keepAlive on, then awake seconds, byte-hours and the add-on grow by it', () => {
    const usage = accrueUsage(
      input({
        previous: {
          phase: 'Running',
          usage: {
            meteredAt: at(T0),
            awakeSeconds: 10,
            storageBytes: 2 ** 30,
            addonSeconds: { keepAlive: 5 },
          },
        },
        spec: { plan: 'paid', keepAlive: true, addons: { backups: { schedule: '0 3 * * *' } } },
        now: T0 + 6 * MINUTE,
      }),
    );
    expect(usage).toEqual({
      awakeSeconds: 370,
      hibernatedSeconds: 0,
      wakes: 0,
      storageByteHours: 2 ** 30 / 10,
      addonSeconds: { keepAlive: 365, backups: 360 },
      meteredAt: at(T0 + 6 * MINUTE),
    });
  });

  it('when a hibernated instance is woken, then the time so far is hibernated time and the wake counts at once', () => {
    const usage = accrueUsage(
      input({
        previous: { phase: 'Hibernated', usage: { meteredAt: at(T0), hibernatedSeconds: 100, wakes: 2 } },
        now: T0 + 1_500,
        woke: true,
        phaseChanges: true,
      }),
    );
    expect(usage).toMatchObject({ awakeSeconds: 0, hibernatedSeconds: 101.5, wakes: 3 });
  });

  it('when many accruals of a few milliseconds add up, then no time is lost to rounding', () => {
    let previous: MeteringInput['previous'] = { phase: 'Running', usage: { meteredAt: at(T0) } };
    for (let i = 1; i <= 1000; i++) {
      const usage = accrueUsage(input({ previous, now: T0 + i * 7, phaseChanges: true }));
      previous = { phase: 'Running', usage };
    }
    expect(previous.usage?.awakeSeconds).toBe(7);
  });

  it('when the clock is behind meteredAt (a new leader with a slower clock), then no time is taken away', () => {
    const usage = accrueUsage(
      input({
        previous: { phase: 'Running', usage: { meteredAt: at(T0), awakeSeconds: 50 } },
        now: T0 - 1_000,
        phaseChanges: true,
      }),
    );
    expect(usage?.awakeSeconds).toBe(50);
    expect(usage?.meteredAt).toBe(at(T0));
  });
});
