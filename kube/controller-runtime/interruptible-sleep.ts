/**
 * The wait of a loop between rounds that a stop (or news the loop waits for) cuts short: `sleep`
 * resolves after `ms`, or as soon as `interrupt` is called. One sleep at a time; an interrupt with
 * no sleep under way does nothing. Used by the leader election's retry loop and the kubelet
 * stand-in's pod worker.
 */
export class InterruptibleSleep {
  private endCurrent: (() => void) | undefined;

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.endCurrent = done;
    });
  }

  /** Ends the sleep under way now. */
  interrupt(): void {
    this.endCurrent?.();
  }
}
