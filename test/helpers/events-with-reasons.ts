import type { CoreV1Event } from '@kubernetes/client-node';
import { waitFor } from '../../local/wait.js';

/**
 * An object's Events once every one of `reasons` is among them. The operator records a pass's
 * Events after the status write that tells of them, so a test that has seen the status must wait
 * for the Events rather than read them once.
 */
export function waitForEventsWithReasons(
  what: string,
  list: () => Promise<CoreV1Event[]>,
  reasons: readonly string[],
): Promise<CoreV1Event[]> {
  return waitFor(
    `Events ${reasons.join(', ')} on ${what}`,
    async () => {
      const events = await list();
      const seen = new Set(events.map((event) => event.reason));
      return reasons.every((reason) => seen.has(reason)) ? events : undefined;
    },
    { timeoutMs: 15_000, intervalMs: 100 },
  );
}
