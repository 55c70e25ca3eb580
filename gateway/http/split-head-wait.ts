/** Reads a head split across them is waited for on the fast path, all within HEAD_WAIT_MS. */
const MAX_HEAD_READS = 4;
/** A head's segments follow each other at once; a client slower than this is node:http's to time. */
const HEAD_WAIT_MS = 1_000;

/**
 * How long the fast path (splice-connection.ts) waits for a head split across reads (TCP
 * segments) before leaving it to node:http, which owns the headers timeout: a few reads within
 * HEAD_WAIT_MS in all, not HEAD_WAIT_MS a read. The clock is read only for an incomplete head.
 */
export class SplitHeadWait {
  /** Reads the head being waited for came in, and since when (performance.now()). */
  private reads = 0;
  private since = 0;

  /** A read left the head incomplete: the ms to wait for the next one, or undefined: wait no more. */
  incomplete(): number | undefined {
    if (this.reads++ === 0) this.since = performance.now();
    const waitMs = HEAD_WAIT_MS - (performance.now() - this.since);
    return this.reads < MAX_HEAD_READS && waitMs >= 1 ? Math.ceil(waitMs) : undefined;
  }

  /** The head is whole: true when it had been waited for (the socket's timeout was changed). */
  whole(): boolean {
    const waited = this.reads > 0;
    this.reads = 0;
    return waited;
  }
}
