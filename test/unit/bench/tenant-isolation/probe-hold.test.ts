import {
  PROBE_HOLD_MS,
  probeHeldMs,
  withoutProbeHeld,
} from '../../../../bench/tenant-isolation/probe-hold.js';
import type { ProbeWindow } from '../../../../bench/tenant-isolation/tenant-b-probe.js';

/** A window whose every series has the samples `[scheduled ms, send late ms, latency ms]`. */
function window(samples: Array<[number, number, number]>): ProbeWindow {
  const series = (pick: (s: [number, number, number]) => number) => {
    const values = samples.map(pick);
    return { publish: values, read: values, redis: values, engine: values };
  };
  return {
    latenciesUs: series(([, , latency]) => latency * 1000),
    sendLateUs: series(([, late]) => late * 1000),
    scheduledMs: series(([at]) => at),
    errors: 0,
    cutOff: 0,
    probeLoopP99Ms: 0,
  };
}

describe("tenant-isolation: the samples B's probe itself held", () => {
  it('when a request was sent late, then the probe held it that long', () => {
    expect(probeHeldMs([], 100, 30, 33)).toBe(30);
  });

  it('when the probe stalled while the request was out, then the part of the stall within it counts, and a stall before or after it does not', () => {
    const stalls = [
      [50, 99],
      [102, 110],
      [120, 140],
    ] as const;
    // Sent at 100, answered at 115: stalled 102-110 while out.
    expect(probeHeldMs(stalls, 100, 0, 15)).toBe(8);
    // Sent late at 105 (scheduled 100), answered at 125: 5 late, 105-110 and 120-125 stalled.
    expect(probeHeldMs(stalls, 100, 5, 25)).toBe(15);
  });

  it(`when samples were held over ${PROBE_HOLD_MS} ms, then they are left out of every series' fields alike and counted`, () => {
    const stalls = [[1000, 1040]] as const;
    const { probe, heldOut } = withoutProbeHeld(
      [
        window([
          [0, 0, 2],
          [10, 60, 62],
          [20, 0, 3],
        ]),
        window([
          [990, 0, 55],
          [1100, 0, 2],
        ]),
      ],
      stalls,
    );
    expect(heldOut).toEqual([
      { publish: 1, read: 1, redis: 1, engine: 1 },
      { publish: 1, read: 1, redis: 1, engine: 1 },
    ]);
    expect(probe[0]!.latenciesUs.publish).toEqual([2000, 3000]);
    expect(probe[0]!.scheduledMs.read).toEqual([0, 20]);
    expect(probe[0]!.sendLateUs.engine).toEqual([0, 0]);
    expect(probe[1]!.latenciesUs.redis).toEqual([2000]);
  });
});
