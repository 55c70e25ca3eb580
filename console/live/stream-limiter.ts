import { TooManyStreamsError } from '../http/errors.js';

/** Caps the live-update streams each session holds open, so one user cannot pin many watches. */
export class StreamLimiter {
  private readonly open = new Map<string, number>();

  constructor(private readonly perSession: number) {}

  /** Takes a slot for the session, or throws TooManyStreamsError; the returned function frees it once. */
  acquire(sessionId: string): () => void {
    const count = this.open.get(sessionId) ?? 0;
    if (count >= this.perSession) throw new TooManyStreamsError(this.perSession);
    this.open.set(sessionId, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(sessionId) ?? 1) - 1;
      if (left <= 0) this.open.delete(sessionId);
      else this.open.set(sessionId, left);
    };
  }

  /** Streams open across every session (a metric and the benchmark read it). */
  get total(): number {
    let sum = 0;
    for (const count of this.open.values()) sum += count;
    return sum;
  }
}
