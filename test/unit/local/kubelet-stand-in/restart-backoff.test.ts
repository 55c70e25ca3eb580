import {
  KUBELET_RESTART_BACKOFF,
  restartDelayMs,
} from '../../../../local/kubelet-stand-in/restart-backoff.js';

describe('restartDelayMs', () => {
  it("when a container keeps ending, then it restarts at once, then after the kubelet's doubling back-off", () => {
    expect([1, 2, 3, 4, 7, 10].map((n) => restartDelayMs(n, KUBELET_RESTART_BACKOFF))).toEqual([
      0, 10_000, 20_000, 40_000, 300_000, 300_000,
    ]);
  });
});
