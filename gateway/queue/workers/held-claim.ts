const MINUTE_MS = 60_000;

/**
 * One batch of ticks a ticker claimed, and every claim it has held on them: the first (from
 * claim-schedule-ticks.ts) and each renewal. A fire run matches any of them, so a run sent just
 * before a renewal still fires (fire-schedule-ticks.ts).
 */
export class HeldClaim {
  private readonly held: number[];

  constructor(
    first: number,
    readonly scheduleIds: readonly string[],
  ) {
    this.held = [first];
  }

  /** Every claim held so far, oldest first. */
  get claims(): readonly number[] {
    return this.held;
  }

  /** When the latest claim runs out (ms). */
  get until(): number {
    return this.held[this.held.length - 1]!;
  }

  /**
   * Takes the next claim, to hold until `until` (ms): later than every claim held, as each claim
   * of a schedule must be, and never a whole minute, which every cron tick is (the rules of
   * claim-schedule-ticks.ts). Recorded before the renewal is sent, so fire runs sent after it
   * match whichever claim Redis holds when they run.
   */
  renew(until: number): number {
    let claim = Math.max(Math.floor(until), this.until + 1);
    if (claim % MINUTE_MS === 0) claim += 1;
    this.held.push(claim);
    return claim;
  }
}
