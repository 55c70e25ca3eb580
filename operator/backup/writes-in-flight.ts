/**
 * Writes sent and not yet answered, at most `limit` of them: a restore reads the archive on while
 * CouchDB writes what it was sent, instead of waiting for each answer in turn. The first write to
 * fail fails the next add(), drain() or throwIfFailed(); a caller that stops (a failure, its own
 * error) awaits settle() before it reports, so no write lands after the restore has said it failed.
 */
export class WritesInFlight {
  private readonly inFlight = new Set<Promise<void>>();
  private failed: { error: unknown } | undefined;

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`writes in flight: ${limit}, not 1 or more`);
  }

  /** Adds a write; resolves once fewer than `limit` are in flight, rejects once any has failed. */
  async add(write: Promise<void>): Promise<void> {
    const tracked: Promise<void> = write.then(
      () => void this.inFlight.delete(tracked),
      (error: unknown) => {
        this.failed ??= { error };
        this.inFlight.delete(tracked);
      },
    );
    this.inFlight.add(tracked);
    while (this.inFlight.size >= this.limit && !this.failed) await Promise.race(this.inFlight);
    this.throwIfFailed();
  }

  /** Resolves once every write is answered; rejects at the first failure. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0 && !this.failed) await Promise.race(this.inFlight);
    this.throwIfFailed();
  }

  /** Resolves once every write sent is answered, failed or not: nothing is left to land later. */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  /** Throws the first failure, if a write has failed: a long write in between (an attachment's chunks) stops at once. */
  throwIfFailed(): void {
    if (this.failed) throw this.failed.error;
  }
}
