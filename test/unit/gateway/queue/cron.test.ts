import { nextTick, parseCron } from '../../../../gateway/queue/core/cron.js';

describe('Upstash-Cron', () => {
  it('when five fields are given, then ticks are whole minutes in UTC', () => {
    const cron = parseCron(' */5 * * * * ');
    expect(cron).toEqual({ text: '*/5 * * * *', fields: '*/5 * * * *', timeZone: 'UTC' });
    expect(new Date(nextTick(cron, Date.parse('2026-11-24T05:31:10Z'))).toISOString()).toBe(
      '2026-11-24T05:35:00.000Z',
    );
  });

  it('when the value starts with CRON_TZ, then ticks follow that zone, daylight saving included', () => {
    const cron = parseCron('CRON_TZ=America/New_York 0 9 * * MON-FRI');
    expect(cron.timeZone).toBe('America/New_York');
    // 9:00 in New York is 14:00 UTC in winter and 13:00 UTC in summer.
    expect(new Date(nextTick(cron, Date.parse('2026-11-24T05:00:00Z'))).toISOString()).toBe(
      '2026-11-24T14:00:00.000Z',
    );
    expect(new Date(nextTick(cron, Date.parse('2026-07-01T05:00:00Z'))).toISOString()).toBe(
      '2026-07-01T13:00:00.000Z',
    );
  });

  it('when a tick is asked for at a tick, then the next one comes strictly after', () => {
    const cron = parseCron('* * * * *');
    expect(nextTick(cron, Date.parse('2026-11-24T05:31:00Z'))).toBe(Date.parse('2026-11-24T05:32:00Z'));
  });

  it.each([
    ['* * * *', /five fields/],
    ['* * * * * *', /five fields/],
    ['', /five fields/],
    ['@daily', /five fields/],
    ['61 * * * *', /Upstash-Cron "61 \* \* \* \*": Constraint error/],
    ['H * * * *', /not a cron expression QStash accepts/],
    ['abc * * * *', /Invalid characters/],
    ['0 0 31 2 *', /Upstash-Cron/],
    ['CRON_TZ=Mars/Olympus 0 9 * * *', /CRON_TZ=Mars\/Olympus is not a known time zone/],
  ])('when Upstash-Cron is %j, then it is refused naming the header', (text, message) => {
    expect(() => parseCron(text)).toThrow(message);
  });
});
