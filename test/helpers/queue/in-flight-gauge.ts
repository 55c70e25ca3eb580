/**
 * Counts the deliveries a test's receiver is answering at once, and the most there ever were:
 * how the e2e suites see a queue's or a flow-control key's parallelism from the outside.
 */
export class InFlightGauge {
  /** Deliveries being answered now. */
  current = 0;
  /** The most answered at once since the last reset. */
  most = 0;
  /** Every delivery that began to be answered since the last reset. */
  started = 0;

  /** Counts one delivery as being answered until `answered` settles. */
  async during<T>(answered: Promise<T>): Promise<T> {
    this.current += 1;
    this.started += 1;
    this.most = Math.max(this.most, this.current);
    try {
      return await answered;
    } finally {
      this.current -= 1;
    }
  }

  /** Counts one delivery as being answered for `ms`: for a destination that answers after a delay. */
  heldFor(ms: number): Promise<void> {
    return this.during(new Promise<void>((resolve) => setTimeout(resolve, ms)));
  }

  /** Forgets the counts of finished deliveries; one still being answered counts down later. */
  reset(): void {
    this.most = this.current;
    this.started = 0;
  }
}
