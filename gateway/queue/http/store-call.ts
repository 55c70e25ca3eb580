import { QueueError, StoreUnavailableError } from '../core/errors.js';

/**
 * Runs a call on a binding's database for an API request: a failure of the database itself
 * (unreachable, loading, out of memory) becomes a 503 that names what did not happen; the
 * queue's own errors pass through.
 */
export async function storeCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof QueueError) throw err;
    throw new StoreUnavailableError(`the queue's database did not ${what}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}
