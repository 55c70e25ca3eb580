import { verdict } from '../../../../bench/tenant-isolation/report.js';
import { buildWindows, ROUND, type Window } from '../../../../bench/tenant-isolation/schedule.js';
import type { ProbeWindow } from '../../../../bench/tenant-isolation/tenant-b-probe.js';

const ROUNDS = 12;
/** 200 latencies (µs) spread evenly from 1 to 3 ms, times `scale`: a window's p99 is ~3 ms x scale. */
const latencies = (scale: number): number[] =>
  Array.from({ length: 200 }, (_, i) => Math.round((1000 + i * 10) * scale));

/** B's samples of a run of ROUNDS rounds, each window's latencies scaled by `scaleOf`. */
function run(scaleOf: (window: Window, index: number) => number) {
  const windows = buildWindows(ROUNDS, 2, 500);
  const probe: ProbeWindow[] = windows.map((window, index) => {
    const samples = latencies(scaleOf(window, index));
    return {
      latenciesUs: { publish: samples, read: samples, redis: samples, engine: samples },
      errors: 0,
      cutOff: 0,
      probeLoopP99Ms: 0,
    };
  });
  return { windows, probe };
}

const secondAlone = ROUND.lastIndexOf('alone');

describe("tenant-isolation verdict on issue 29's 1.1x", () => {
  it('when B with A at its limits is as fast as B alone, and alone against alone agrees, then it is met', () => {
    expect(verdict(run((w) => (w.phase === 'A at its limits' ? 1.02 : 1)))).toBe('met');
  });

  it('when B with A at its limits is twice as slow as B alone in every round, then it is MISSED', () => {
    expect(verdict(run((w) => (w.phase === 'A at its limits' ? 2 : 1)))).toBe('MISSED');
  });

  it("when B alone's two windows of a round differ by 1.5x from round to round, then it is undecided for noise, even with A at its limits as fast as alone", () => {
    const noisy = run((w, index) =>
      index % ROUND.length === secondAlone ? (w.round % 2 === 0 ? 1.5 : 0.6) : 1,
    );
    expect(verdict(noisy)).toMatch(/^undecided: this run's noise, B alone against B alone, spans/);
  });

  it("when some of B's requests were cut off by the run's end, then it is undecided, even with A at its limits as fast as alone", () => {
    const cut = run(() => 1);
    cut.probe[ROUND.indexOf('A at its limits')]!.cutOff = 3;
    expect(verdict(cut)).toMatch(/^undecided: 3 of B's requests were cut off/);
  });

  it('when B with A at its limits is 1.5x slower in one round of 12 only, then the interval straddles the goal: undecided', () => {
    expect(verdict(run((w) => (w.phase === 'A at its limits' && w.round === 0 ? 1.5 : 1)))).toBe(
      'undecided: the interval straddles the goal',
    );
  });
});
