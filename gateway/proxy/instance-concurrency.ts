/**
 * Requests in flight per instance on this replica, against SETTEE_GATEWAY_MAX_INSTANCE_REQUESTS:
 * one tenant's flood of slow requests (or of continuous _changes feeds) cannot take every
 * connection this gateway has to give. A request is counted from admission until its response
 * closes; `limit` 0 counts nothing.
 */
export class InstanceConcurrency {
  private readonly inFlight = new Map<string, number>();

  constructor(readonly limit: number) {}

  /** Counts one more request for `key`, or false (counting nothing) when it has `limit` already. */
  tryEnter(key: string): boolean {
    if (this.limit === 0) return true;
    const now = this.inFlight.get(key) ?? 0;
    if (now >= this.limit) return false;
    this.inFlight.set(key, now + 1);
    return true;
  }

  leave(key: string): void {
    if (this.limit === 0) return;
    const now = (this.inFlight.get(key) ?? 1) - 1;
    if (now <= 0) this.inFlight.delete(key);
    else this.inFlight.set(key, now);
  }
}
