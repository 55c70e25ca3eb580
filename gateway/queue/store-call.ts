import { QueueError, StoreUnavailableError } from './errors.js';

/**
 * Runs a call on a binding's database; anything but a queue error (a refused connection, a
 * timeout, a script error) becomes a 503 that says what was not done.
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
