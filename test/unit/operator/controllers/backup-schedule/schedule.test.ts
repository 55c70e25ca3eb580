import {
  decideSchedule,
  InvalidScheduleError,
  scheduleProblem,
} from '../../../../../operator/controllers/backup-schedule/schedule.js';

const at = (iso: string) => new Date(iso);
const created = at('2026-01-01T00:00:00Z');

describe('decideSchedule', () => {
  it('when the daily cron time has passed and no backup was made for it, then that time is due and the next is tomorrow', () => {
    const decision = decideSchedule({
      schedule: '0 3 * * *',
      now: at('2026-03-10T03:00:30Z'),
      since: created,
      lastScheduledFor: undefined,
    });
    expect(decision).toEqual({
      due: at('2026-03-10T03:00:00Z'),
      next: at('2026-03-11T03:00:00Z'),
      periodMs: 86_400_000,
    });
  });

  it('when now is exactly a cron time, then that time is due (not the one before)', () => {
    expect(
      decideSchedule({
        schedule: '0 3 * * *',
        now: at('2026-03-10T03:00:00Z'),
        since: created,
        lastScheduledFor: undefined,
      }).due,
    ).toEqual(at('2026-03-10T03:00:00Z'));
  });

  it('when a backup was already made for the latest cron time, then nothing is due', () => {
    const decision = decideSchedule({
      schedule: '0 3 * * *',
      now: at('2026-03-10T09:00:00Z'),
      since: created,
      lastScheduledFor: at('2026-03-10T03:00:00Z'),
    });
    expect(decision.due).toBeUndefined();
    expect(decision.next).toEqual(at('2026-03-11T03:00:00Z'));
  });

  it('when the operator was down for several runs, then only the latest missed one is owed', () => {
    const decision = decideSchedule({
      schedule: '0 * * * *',
      now: at('2026-03-10T09:20:00Z'),
      since: created,
      lastScheduledFor: at('2026-03-10T04:00:00Z'),
    });
    expect(decision.due).toEqual(at('2026-03-10T09:00:00Z'));
  });

  it('when the latest cron time is before the schedule took effect (turned on later), then nothing is owed until the next', () => {
    const decision = decideSchedule({
      schedule: '0 3 * * *',
      now: at('2026-03-10T05:00:00Z'),
      since: at('2026-03-10T04:00:00Z'),
      lastScheduledFor: undefined,
    });
    expect(decision.due).toBeUndefined();
    expect(decision.periodMs).toBe(86_400_000);
  });

  it('when the schedule is a macro such as @hourly, then it is read as cron does', () => {
    expect(
      decideSchedule({
        schedule: '@hourly',
        now: at('2026-03-10T05:10:00Z'),
        since: created,
        lastScheduledFor: undefined,
      }).next,
    ).toEqual(at('2026-03-10T06:00:00Z'));
  });

  it('when a field is out of range, then an InvalidScheduleError names the schedule and the problem', () => {
    expect(() =>
      decideSchedule({
        schedule: '99 * * * *',
        now: created,
        since: created,
        lastScheduledFor: undefined,
      }),
    ).toThrow(InvalidScheduleError);
    expect(scheduleProblem('99 * * * *')).toMatch(/"99 \* \* \* \*" is not a valid cron expression: .*0-59/);
    expect(scheduleProblem('*/5 * * * *')).toBeUndefined();
  });
});
