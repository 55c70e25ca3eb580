/**
 * Phase 3 of bench/queue-flows.ts: throughput of queues and of flow-control keys of parallelism 1,
 * 10 and 100, and of a queue and a key both of 10, against plain publishes to the same receiver,
 * and each message's time from its request to its delivery.
 */
import { waitFor } from '../../local/wait.js';
import type { ArrivalReceiver as Receiver } from '../lib/arrival-receiver.js';
import { median, medianSpreadText, quantile, round } from '../lib/stats.js';
import { queueApi } from '../queue/queue-api.js';
import { ROUNDS } from './flows-settings.js';

/** Messages per run of the queue phase, by receiver delay: a parallelism-1 queue at 50 ms takes 5 s for 100. */
const QUEUE_MESSAGES: Readonly<Record<number, number>> = { 1: 400, 50: 100 };
const QUEUE_SENDERS = 16;

/**
 * Sends `count` messages, QUEUE_SENDERS requests at a time alternating between the replicas, to
 * `route(i)`; resolves with the time from the first request to the last delivery and each
 * message's time from its request to its delivery.
 */
async function timeDeliveries(
  bases: readonly string[],
  token: string,
  receiver: Receiver,
  count: number,
  route: (i: number) => string,
  headers: Record<string, string> = {},
): Promise<{ totalMs: number; latencies: number[] }> {
  receiver.arrivals = [];
  const sentAt = new Map<string, number>();
  const started = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: QUEUE_SENDERS }, async () => {
      while (next < count) {
        const i = next++;
        const at = Date.now();
        const response = await queueApi(bases[i % bases.length]!, token, route(i), {
          method: 'POST',
          headers,
          body: `{"i":${i}}`,
        });
        sentAt.set(((await response.json()) as { messageId: string }).messageId, at);
      }
    }),
  );
  await waitFor(
    'every message delivered',
    async () => (receiver.arrivals.length >= count ? true : undefined),
    {
      timeoutMs: 120_000,
      intervalMs: 2,
    },
  );
  const latencies = receiver.arrivals.map((a) => a.at - (sentAt.get(a.messageId) ?? started));
  return { totalMs: Math.max(...receiver.arrivals.map((a) => a.at)) - started, latencies };
}

/** One way of sending phase 3's messages: where to, and with which headers. */
interface SendKind {
  name: string;
  route: (receiver: string, i: number) => string;
  headers?: Record<string, string>;
}

const PARALLELISMS = [1, 10, 100] as const;
const QUEUE_FLOW_QUEUE = 'qf';
const SEND_KINDS: readonly SendKind[] = [
  { name: 'publish', route: (receiver, i) => `/v2/publish/${receiver}/m/${i}` },
  ...PARALLELISMS.map((parallelism, q) => ({
    name: `queue p=${parallelism}`,
    route: (receiver: string, i: number) => `/v2/enqueue/q${q}/${receiver}/m/${i}`,
  })),
  ...PARALLELISMS.map((parallelism) => ({
    name: `flow p=${parallelism}`,
    route: (receiver: string, i: number) => `/v2/publish/${receiver}/m/${i}`,
    headers: {
      'upstash-flow-control-key': `flow-${parallelism}`,
      'upstash-flow-control-value': `parallelism=${parallelism}`,
    },
  })),
  // Both limits at 10: the cost of the second pass through the stream that admits a queue's
  // message to its key (admit-flow-control-entry.ts), against `queue p=10` and `flow p=10`.
  {
    name: 'queue+flow p=10',
    route: (receiver: string, i: number) => `/v2/enqueue/${QUEUE_FLOW_QUEUE}/${receiver}/m/${i}`,
    headers: { 'upstash-flow-control-key': 'queue-flow-10', 'upstash-flow-control-value': 'parallelism=10' },
  },
];

/**
 * 3. Queues and flow-control keys of parallelism 1, 10 and 100, and a queue and key both of 10,
 * against plain publishes, receivers at 1 ms and 50 ms.
 */
export async function benchQueues(
  bases: readonly string[],
  token: string,
  receiver: Receiver,
): Promise<void> {
  const kinds = SEND_KINDS.map((kind) => kind.name);
  for (const [i, parallelism] of PARALLELISMS.entries())
    await queueApi(bases[0]!, token, '/v2/queues', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ queueName: `q${i}`, parallelism }),
    });
  await queueApi(bases[0]!, token, '/v2/queues', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ queueName: QUEUE_FLOW_QUEUE, parallelism: 10 }),
  });
  for (const delayMs of [1, 50]) {
    receiver.delayMs = delayMs;
    const count = QUEUE_MESSAGES[delayMs]!;
    const rate = new Map<string, number[]>(kinds.map((k) => [k, []]));
    const p50 = new Map<string, number[]>(kinds.map((k) => [k, []]));
    const p99 = new Map<string, number[]>(kinds.map((k) => [k, []]));
    for (let r = 0; r < ROUNDS; r += 1) {
      // Side by side: every kind once per round, in turn.
      for (const kind of SEND_KINDS) {
        const route = (i: number) => kind.route(receiver.url, i);
        const { totalMs, latencies } = await timeDeliveries(
          bases,
          token,
          receiver,
          count,
          route,
          kind.headers,
        );
        rate.get(kind.name)!.push((count * 1000) / totalMs);
        p50.get(kind.name)!.push(quantile(latencies, 0.5));
        p99.get(kind.name)!.push(quantile(latencies, 0.99));
      }
    }
    const plain = median(rate.get('publish')!);
    console.log(
      `queues, receiver answering in ${delayMs} ms, ${count} messages, two replicas   median (min-max) over ${ROUNDS}`,
    );
    console.log('  kind              messages/s          / publish   request to delivery p50 ms    p99 ms');
    for (const kind of kinds)
      console.log(
        `  ${kind.padEnd(16)}  ${medianSpreadText(rate.get(kind)!, 0).padEnd(18)}  ${String(round(median(rate.get(kind)!) / plain, 3)).padEnd(10)}  ${medianSpreadText(p50.get(kind)!, 0).padEnd(28)}  ${medianSpreadText(p99.get(kind)!, 0)}`,
      );
    console.log('');
  }
  receiver.delayMs = 0;
}
