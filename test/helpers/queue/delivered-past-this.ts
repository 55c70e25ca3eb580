import type { Client } from '@upstash/qstash';
import { waitFor } from '../../../local/wait.js';

/**
 * Publishes one message through each client (one per replica) to `url` and waits until `received`
 * (a receiver's live list) holds all of them, then takes them off it: the delivery path has run
 * past what was stored before, so a check that nothing else was delivered may follow, instead of
 * a fixed pause.
 */
export async function deliveredPastThis<T>(options: {
  clients: readonly Client[];
  url: string;
  received: T[];
  /** Whether an entry of `received` is one of these messages (sent to `url`). */
  isPast: (entry: T) => boolean;
}): Promise<void> {
  const { clients, received, isPast } = options;
  for (const [i, client] of clients.entries()) await client.publish({ url: options.url, body: `past ${i}` });
  await waitFor(
    'the deliveries past this point',
    async () => received.filter(isPast).length >= clients.length || undefined,
    { timeoutMs: 20_000, intervalMs: 20 },
  );
  const others = received.filter((entry) => !isPast(entry));
  received.length = 0;
  received.push(...others);
}
