/** Phase 2 of bench/queue-flows.ts: one publish to a URL group against a batch of the same messages. */
import { waitFor } from '../../local/wait.js';
import type { ArrivalReceiver as Receiver } from '../lib/arrival-receiver.js';
import { median, medianSpreadText, round } from '../lib/stats.js';
import { queueApi } from '../queue/queue-api.js';
import { ROUNDS } from './flows-settings.js';

const ENDPOINTS = 100;

/** 2. Fan-out to a 100-endpoint group against a batch of the same 100 messages, one replica. */
export async function benchFanOut(base: string, token: string, receiver: Receiver): Promise<void> {
  const endpoints = Array.from({ length: ENDPOINTS }, (_, i) => ({ url: `${receiver.url}/fan/${i}` }));
  await queueApi(base, token, '/v2/topics/fan/endpoints', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ endpoints }),
  });
  const batchBody = JSON.stringify(endpoints.map((e) => ({ destination: e.url, body: '{"n":1}' })));
  const groupMs: number[] = [];
  const batchMs: number[] = [];
  const timeToLast = async (send: () => Promise<Response>): Promise<number> => {
    receiver.arrivals = [];
    const started = Date.now();
    await send();
    await waitFor('every endpoint', async () => (receiver.arrivals.length >= ENDPOINTS ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 1,
    });
    return Math.max(...receiver.arrivals.map((a) => a.at)) - started;
  };
  for (let round = 0; round < ROUNDS * 3; round += 1) {
    groupMs.push(
      await timeToLast(() => queueApi(base, token, '/v2/publish/fan', { method: 'POST', body: '{"n":1}' })),
    );
    batchMs.push(
      await timeToLast(() =>
        queueApi(base, token, '/v2/batch', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: batchBody,
        }),
      ),
    );
  }
  console.log(
    `fan-out to ${ENDPOINTS} endpoints, request to last delivery     median (min-max) over ${ROUNDS * 3}`,
  );
  console.log(`  publish to the URL group ms                        ${medianSpreadText(groupMs, 0)}`);
  console.log(
    `  batch of the same ${ENDPOINTS} messages ms                  ${medianSpreadText(batchMs, 0)}`,
  );
  console.log(
    `  group / batch                                      ${round(median(groupMs) / median(batchMs), 2)}`,
  );
  console.log('');
}
