import { deriveBackupSchedule } from '../../../../../operator/controllers/couch-instance/backup-schedule-since.js';
import { decideSchedule } from '../../../../../operator/controllers/backup-schedule/schedule.js';

const paid = (schedule?: string) => ({
  plan: 'paid' as const,
  ...(schedule ? { addons: { backups: { schedule } } } : {}),
});

describe('deriveBackupSchedule', () => {
  it('when a schedule is first seen, then it takes effect now', () => {
    expect(
      deriveBackupSchedule({ spec: paid('0 3 * * *'), previous: undefined, now: '2026-03-10T10:00:00Z' }),
    ).toEqual({
      schedule: '0 3 * * *',
      since: '2026-03-10T10:00:00Z',
    });
  });

  it('when the schedule is unchanged, then the moment it took effect is kept; when it changes, it starts over', () => {
    const previous = { schedule: '0 3 * * *', since: '2026-03-01T00:00:00Z' };
    expect(deriveBackupSchedule({ spec: paid('0 3 * * *'), previous, now: '2026-03-10T10:00:00Z' })).toBe(
      previous,
    );
    expect(
      deriveBackupSchedule({ spec: paid('0 */6 * * *'), previous, now: '2026-03-10T10:00:00Z' }),
    ).toEqual({
      schedule: '0 */6 * * *',
      since: '2026-03-10T10:00:00Z',
    });
  });

  it('when the add-on is off, or the instance is free, then there is no schedule', () => {
    expect(
      deriveBackupSchedule({ spec: paid(), previous: undefined, now: '2026-03-10T10:00:00Z' }),
    ).toBeUndefined();
    expect(
      deriveBackupSchedule({
        spec: { plan: 'free', addons: { backups: { schedule: '0 3 * * *' } } },
        previous: undefined,
        now: '2026-03-10T10:00:00Z',
      }),
    ).toBeUndefined();
  });

  it('when a daily schedule is turned on at 10:00 for an instance created days ago, then the first run is the next 03:00, not at once', () => {
    const turnedOn = deriveBackupSchedule({
      spec: paid('0 3 * * *'),
      previous: undefined,
      now: '2026-03-10T10:00:00Z',
    });
    const decision = decideSchedule({
      schedule: '0 3 * * *',
      now: new Date('2026-03-10T10:00:05Z'),
      since: new Date(turnedOn?.since ?? ''),
      lastScheduledFor: undefined,
    });
    expect(decision.due).toBeUndefined();
    expect(decision.next).toEqual(new Date('2026-03-11T03:00:00Z'));
    expect(
      decideSchedule({
        schedule: '0 3 * * *',
        now: new Date('2026-03-11T03:00:01Z'),
        since: new Date(turnedOn?.since ?? ''),
        lastScheduledFor: undefined,
      }).due,
    ).toEqual(new Date('2026-03-11T03:00:00Z'));
  });
});
