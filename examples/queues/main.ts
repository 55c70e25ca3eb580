import { Client } from '@upstash/qstash';
import { sendOrderEvents } from './order-events.js';

/**
 * Enqueues a few order events on a binding's queue and shows the queues:
 *   VQUEUE_URL=... VQUEUE_TOKEN=... RECEIVER=http://127.0.0.1:3000 npx tsx examples/queues/main.ts
 * (examples/receiver/main.ts is a receiver to point it at on the local platform).
 */
const { VQUEUE_URL, VQUEUE_TOKEN } = process.env;
if (!VQUEUE_URL || !VQUEUE_TOKEN) {
  console.error('set VQUEUE_URL and VQUEUE_TOKEN (from the binding’s env Secret)');
  process.exit(1);
}
const receiver = process.env.RECEIVER ?? 'http://127.0.0.1:3000';
const client = new Client({ baseUrl: VQUEUE_URL, token: VQUEUE_TOKEN });
const messageIds = await sendOrderEvents(
  client,
  { fulfilment: `${receiver}/fulfilment`, invoices: `${receiver}/invoices` },
  [
    { orderId: 'o-1', status: 'created' },
    { orderId: 'o-1', status: 'paid' },
    { orderId: 'o-1', status: 'shipped' },
  ],
);
console.log(JSON.stringify({ messageIds, queues: await client.queue().list() }));
