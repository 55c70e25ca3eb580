import {
  BACKOFF_FORGOTTEN_AFTER_MS,
  CrashLoopBackOff,
} from '../../../../local/kubelet-stand-in/restart-backoff.js';

const S = 1_000;

/** Exits `runsMs` after each restart, handled at once; the delay each exit waited, in seconds. */
function delaysOf(backoff: CrashLoopBackOff, runsMs: number[]): number[] {
  let now = 0;
  return runsMs.map((runMs) => {
    now += runMs;
    const finishedAt = now;
    const waited = backoff.remainingMs(finishedAt, now);
    now += waited;
    backoff.restarted(finishedAt, now);
    return waited / S;
  });
}

describe('CrashLoopBackOff', () => {
  it("when a container keeps ending soon after its start, then its first exit is restarted at once and each next one after the kubelet's 10 s doubling to 5 min", () => {
    expect(delaysOf(new CrashLoopBackOff(), Array(9).fill(5 * S))).toEqual([
      0, 10, 20, 40, 80, 160, 300, 300, 300,
    ]);
  });

  it('when a container ends more than 10 minutes after its last restart, then it is restarted at once and its back-off starts over at 10 s', () => {
    const runs = [5 * S, 5 * S, 5 * S, BACKOFF_FORGOTTEN_AFTER_MS + S, 5 * S];
    expect(delaysOf(new CrashLoopBackOff(), runs)).toEqual([0, 10, 20, 0, 10]);
  });

  it('when it ends exactly 10 minutes after its last restart, then the back-off still holds, as the kubelet forgets only after more than 600 s', () => {
    expect(delaysOf(new CrashLoopBackOff(), [5 * S, BACKOFF_FORGOTTEN_AFTER_MS])).toEqual([0, 10]);
  });

  it('when the exit is handled seconds after the container finished (a slow status report), then the wait is what is left of the back-off counted from the finish', () => {
    const backoff = new CrashLoopBackOff();
    backoff.restarted(0, 0);
    const finishedAt = 5 * S;
    expect(backoff.delayMs(finishedAt)).toBe(10 * S);
    expect(backoff.remainingMs(finishedAt, finishedAt + 3 * S)).toBe(7 * S);
    expect(backoff.remainingMs(finishedAt, finishedAt + 12 * S)).toBe(0);
  });

  it('when a pod has never been restarted, then no back-off is in force: the kubelet has no entry before the first restart', () => {
    const backoff = new CrashLoopBackOff({ baseMs: 200, maxMs: 1_000 });
    expect([backoff.delayMs(1), backoff.remainingMs(1, 1)]).toEqual([0, 0]);
    backoff.restarted(1, 1);
    expect(backoff.remainingMs(2, 2)).toBe(200);
  });
});
