import { backoffOf, FAULT_KINDS, faultKindSchedule, seededRandom } from '../../../../bench/chaos/nemesis.js';

describe('the chaos nemesis schedule', () => {
  it('when 10 faults are scheduled, then every kind is among them and none comes a third time', () => {
    for (const seed of [1, 29, 2929, 123456]) {
      const schedule = faultKindSchedule(seededRandom(seed), 10);
      expect(schedule).toHaveLength(10);
      expect(new Set(schedule)).toEqual(new Set(FAULT_KINDS));
      for (const kind of FAULT_KINDS)
        expect(schedule.filter((k) => k === kind).length).toBeLessThanOrEqual(2);
    }
  });

  it('when the same seed is given, then the same schedule comes back, and another seed gives another', () => {
    expect(faultKindSchedule(seededRandom(29), 24)).toEqual(faultKindSchedule(seededRandom(29), 24));
    expect(faultKindSchedule(seededRandom(29), 24)).not.toEqual(faultKindSchedule(seededRandom(30), 24));
  });
});

describe("the kubelet's restart back-off as the nemesis reads it", () => {
  it('when a pod waits in CrashLoopBackOff, then its back-off is read from the message; any other wait is none', () => {
    expect(backoffOf('back-off 40s restarting failed container=couchdb pod=default/chaos-0-0')).toBe(40_000);
    expect(backoffOf('back-off 10s restarting failed container=couchdb pod=default/chaos-1-0')).toBe(10_000);
    expect(backoffOf(undefined)).toBe(0);
    expect(backoffOf('waiting for its claim')).toBe(0);
  });
});
