import { withoutProbeHeld } from '../../../../bench/tenant-isolation/probe-hold.js';
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
    const zeros = samples.map(() => 0);
    return {
      latenciesUs: { publish: samples, read: samples, redis: samples, engine: samples },
      sendLateUs: { publish: zeros, read: zeros, redis: zeros, engine: zeros },
      scheduledMs: { publish: zeros, read: zeros, redis: zeros, engine: zeros },
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

  it("when the slowest samples of some 'alone' windows are ones B's probe sent a few ms late (its own stall), then counted from their send they are not slow and the verdict is met; counted from their schedule, undecided", () => {
    const stalled = run((w) => (w.phase === 'A at its limits' ? 1.02 : 1));
    // In every third round, the first 'alone' window's last 4 samples were sent 4 ms late.
    for (const [index, w] of stalled.windows.entries()) {
      if (w.phase !== 'alone' || index % ROUND.length === secondAlone || w.round % 3 !== 0) continue;
      const probe = stalled.probe[index]!;
      const late = probe.latenciesUs.publish.map((latency, i) => (i >= 196 ? 4_000 : 0));
      const latencies = probe.latenciesUs.publish.map((latency, i) => latency + late[i]!);
      stalled.probe[index] = {
        ...probe,
        latenciesUs: { publish: latencies, read: latencies, redis: latencies, engine: latencies },
        sendLateUs: { publish: late, read: late, redis: late, engine: late },
      };
    }
    expect(verdict(stalled)).toMatch(/^undecided: this run's noise/);
    const { probe, heldOut } = withoutProbeHeld(stalled.probe);
    expect(heldOut.every((held) => held.publish === 0)).toBe(true);
    expect(verdict({ windows: stalled.windows, probe }, heldOut)).toBe('met');
  });

  /** B's samples with A at its limits as fast as alone, `n` of them left out in each of the first `windows` 'A at its limits' windows. */
  const heldIn = (n: number, windows: number) => {
    const held = run((w) => (w.phase === 'A at its limits' ? 1.02 : 1));
    let left = windows;
    const heldOut = held.windows.map((w) => {
      const count = w.phase === 'A at its limits' && left-- > 0 ? n : 0;
      return { publish: count, read: count, redis: count, engine: count };
    });
    return verdict(held, heldOut);
  };

  it("when the probe sent late more than 0.1% of a phase's samples (3 of 2,403), then it is undecided, naming the probe; at 0.1% or less (2 of 2,402), decided", () => {
    expect(heldIn(1, 3)).toMatch(
      /^undecided: the probe itself sent over 5 ms late .* 0\.12% \/ 0\.12% in 'A at its limits'/,
    );
    expect(heldIn(1, 2)).toBe('met');
  });
});
