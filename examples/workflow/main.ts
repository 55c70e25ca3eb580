import type { AddressInfo } from 'node:net';
import { Client as QStashClient, Receiver } from '@upstash/qstash';
import { Client } from '@upstash/workflow';
import { serve } from '@upstash/workflow/express';
import express from 'express';
import { fulfilOrder, type Order } from './order-workflow.js';

/**
 * Serves the order workflow with @upstash/workflow's serve() on Express, starts one run with the
 * workflow Client, prints how the run ended with its steps, and exits:
 *   VQUEUE_URL=... VQUEUE_QSTASH_TOKEN=... VQUEUE_CURRENT_SIGNING_KEY=... VQUEUE_NEXT_SIGNING_KEY=... \
 *     npx tsx examples/workflow/main.ts
 * (values of a QueueBinding's env Secret; `make run` prints the example binding's).
 */
const { VQUEUE_URL, VQUEUE_QSTASH_TOKEN, VQUEUE_CURRENT_SIGNING_KEY, VQUEUE_NEXT_SIGNING_KEY } = process.env;
if (!VQUEUE_URL || !VQUEUE_QSTASH_TOKEN || !VQUEUE_CURRENT_SIGNING_KEY || !VQUEUE_NEXT_SIGNING_KEY) {
  console.error(
    'set VQUEUE_URL, VQUEUE_QSTASH_TOKEN, VQUEUE_CURRENT_SIGNING_KEY and VQUEUE_NEXT_SIGNING_KEY (from the binding’s env Secret)',
  );
  process.exit(1);
}

const app = express();
// A delivery carries the run's steps so far; past Express's 100 kB default with large step results.
app.use(express.json({ limit: '2mb' }));
app.use(express.text({ limit: '2mb' }));
const server = app.listen(Number(process.env.PORT ?? '3001'), '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const workflowUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`;
app.use(
  '/orders',
  serve<Order>(fulfilOrder, {
    // The queue instead of Upstash: the SDK's QStash client pointed at the binding, with the
    // binding's token in QStash's format (context.createWebhook reads the binding's id from it).
    qstashClient: new QStashClient({ baseUrl: VQUEUE_URL, token: VQUEUE_QSTASH_TOKEN }),
    // Every delivery is verified with the binding's signing keys.
    receiver: new Receiver({
      currentSigningKey: VQUEUE_CURRENT_SIGNING_KEY,
      nextSigningKey: VQUEUE_NEXT_SIGNING_KEY,
    }),
    url: workflowUrl,
  }),
);
console.log(`workflow served at ${workflowUrl}`);

const client = new Client({ baseUrl: VQUEUE_URL, token: VQUEUE_QSTASH_TOKEN });
const order: Order = { orderId: 'o-1', amount: 42.5, items: ['book', 'pen'] };
const { workflowRunId } = await client.trigger({ url: workflowUrl, body: order });
console.log(`started run ${workflowRunId}`);

// client.logs() reports the run with its steps; poll it until the run has ended.
const deadline = Date.now() + 60_000;
let run = (await client.logs({ workflowRunId })).runs[0];
while (run?.workflowState === 'RUN_STARTED' && Date.now() < deadline) {
  await new Promise((resolve) => setTimeout(resolve, 250));
  run = (await client.logs({ workflowRunId })).runs[0];
}
server.close();
console.log(
  JSON.stringify({
    workflowRunId,
    state: run?.workflowState,
    result: run?.workflowRunResponse === undefined ? undefined : JSON.parse(run.workflowRunResponse),
    steps: run?.steps.flatMap((group) => group.steps.map((step) => step.stepName)),
  }),
);
process.exit(run?.workflowState === 'RUN_SUCCESS' ? 0 : 1);
