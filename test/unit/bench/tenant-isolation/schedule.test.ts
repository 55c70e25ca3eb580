import { buildWindows, ROUND } from '../../../../bench/tenant-isolation/schedule.js';

describe('tenant-isolation windows', () => {
  it('when rounds are built, then each round holds every phase of ROUND once in order, with the gap between windows', () => {
    const windows = buildWindows(2, 2, 500);
    expect(windows.map((w) => w.phase)).toEqual([...ROUND, ...ROUND]);
    expect(windows.map((w) => w.round)).toEqual([...ROUND.map(() => 0), ...ROUND.map(() => 1)]);
    for (const [i, w] of windows.entries()) {
      expect(w.toMs - w.fromMs).toBe(2000);
      if (i > 0) expect(w.fromMs - windows[i - 1]!.toMs).toBe(500);
    }
  });
});
