import type { Client } from '@upstash/qstash';
import { waitFor } from '../../../local/wait.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import type { QueueGatewayProcess } from '../../helpers/queue/spawn-queue-gateway.js';
import { useFlowControlReplicas } from '../../helpers/queue/flow-control-replicas.js';
import { snapshotDatabase } from '../../helpers/queue/redis-snapshot.js';
import { quietly } from '../../helpers/queue/quietly.js';
import { InFlightGauge } from '../../helpers/queue/in-flight-gauge.js';

const KEY_PREFIX = '{flow-paths-test}:';
const keys = queueKeys(KEY_PREFIX);

/**
 * Flow control on the paths that put a message on the stream without the key's token: a queue
 * (`/v2/enqueue`, batch items with `queue`), a schedule's tick and a DLQ retry. Through the
 * unchanged SDK against two gateway processes on one database: the worker that reads such a
 * message admits it to its key (admit-flow-control-entry.ts), so the key's limits hold, a queue
 * stays in order, and a paused key holds them all.
 */
describe('flow control through queues, schedules and DLQ retries, with the SDK across two replicas', () => {
  const replicas = useFlowControlReplicas(KEY_PREFIX);
  const gateways: QueueGatewayProcess[] = [];
  let clients: [Client, Client];
  const inFlight = new InFlightGauge();

  const url = (path: string) => `${replicas.destination.baseUrl}/${path}`;
  const paths = () => replicas.destination.requests.map((r) => r.path);
  const { delivered, forgotten } = replicas;
  /** Makes the schedule's next tick come now, as the clock reaching it would (sdk-schedules.test.ts). */
  const makeTickDue = (scheduleId: string) =>
    replicas.inspect.zadd(keys.scheduleTicks, 'XX', Date.now() - 1_000, scheduleId);

  beforeAll(async () => {
    for (const name of ['fp-a', 'fp-b']) gateways.push(await replicas.startReplica(name));
    clients = [replicas.sdkClient(gateways[0]!), replicas.sdkClient(gateways[1]!)];
  });

  beforeEach(async () => {
    await waitFor('no delivery held', async () => inFlight.current === 0 || undefined, { timeoutMs: 5_000 });
    replicas.destination.requests.length = 0;
    inFlight.reset();
    // Every delivery is held 60 ms, counted; a path with "failing" in it answers 500.
    replicas.destination.answer = (request) => {
      if (request.path.includes('failing')) return { status: 500 };
      void inFlight.heldFor(60);
      return { status: 200, delayMs: 60 };
    };
  });

  it('when two queues share a key of parallelism 1 and enqueue through both replicas, then one is delivered at a time and each queue keeps its order', async () => {
    const [a, b] = clients;
    for (let i = 0; i < 4; i += 1) {
      await a.queue({ queueName: 'fp-orders' }).enqueueJSON({
        url: url(`orders/${i}`),
        body: { i },
        flowControl: { key: 'fp-shared', parallelism: 1 },
      });
      await b.queue({ queueName: 'fp-mails' }).enqueueJSON({
        url: url(`mails/${i}`),
        body: { i },
        flowControl: { key: 'fp-shared', parallelism: 1 },
      });
    }
    await delivered(8);
    expect(inFlight.most).toBe(1);
    expect(paths().filter((p) => p.startsWith('/orders'))).toEqual([0, 1, 2, 3].map((i) => `/orders/${i}`));
    expect(paths().filter((p) => p.startsWith('/mails'))).toEqual([0, 1, 2, 3].map((i) => `/mails/${i}`));
    await forgotten('fp-shared');
    await waitFor(
      'both queues idle',
      async () =>
        (await replicas.inspect.exists(keys.queueActive('fp-orders'), keys.queueActive('fp-mails'))) === 0 ||
        undefined,
      { timeoutMs: 5_000, intervalMs: 20 },
    );
  });

  it('when batch items name a queue and a flow-control key, then they are stored, wait on the key while it is paused, and go once it is resumed', async () => {
    const [a, b] = clients;
    await a.flowControl.pause('fp-batch');
    const answers = await b.batchJSON(
      [0, 1, 2].map((i) => ({
        url: url(`batch/${i}`),
        body: { i },
        queueName: 'fp-batched',
        flowControl: { key: 'fp-batch', parallelism: 2, rate: 10, period: 1 },
      })),
    );
    expect(answers).toEqual([0, 1, 2].map(() => ({ messageId: expect.stringMatching(/^msg_/) })));
    // The queue (parallelism 1) started the first; its worker admitted it to the paused key.
    await waitFor(
      'the first admitted to its key',
      async () => ((await a.flowControl.get('fp-batch')).waitListSize === 1 ? true : undefined),
      { timeoutMs: 5_000, intervalMs: 20 },
    );
    expect(await b.flowControl.get('fp-batch')).toMatchObject({
      parallelismMax: 2,
      rateMax: 10,
      isPaused: true,
    });
    const first = (answers[0] as { messageId: string }).messageId;
    expect(await a.messages.get(first)).toMatchObject({
      messageId: first,
      queueName: 'fp-batched',
      flowControlKey: 'fp-batch',
      parallelism: 2,
    });
    expect(await a.queue({ queueName: 'fp-batched' }).get()).toMatchObject({ lag: 2 });
    await replicas.deliveredPastThis(clients);
    expect(replicas.destination.requests).toHaveLength(0);
    await b.flowControl.resume('fp-batch');
    await delivered(3);
    expect(paths()).toEqual(['/batch/0', '/batch/1', '/batch/2']);
    await forgotten('fp-batch');
  });

  it('when a schedule has a flow-control key, then get answers it, and each tick, plain or into a queue, waits on the key', async () => {
    const [a, b] = clients;
    const { scheduleId } = await a.schedules.create({
      destination: url('scheduled/plain'),
      cron: '0 0 1 1 *',
      body: 'tick',
      flowControl: { key: 'fp-sched', parallelism: 1, rate: 5, period: '10s' },
    });
    const { scheduleId: queuedId } = await b.schedules.create({
      destination: url('scheduled/queued'),
      cron: '0 0 1 1 *',
      body: 'queued tick',
      queueName: 'fp-scheduled',
      flowControl: { key: 'fp-sched', parallelism: 1 },
    });
    expect(await b.schedules.get(scheduleId)).toMatchObject({
      scheduleId,
      flowControlKey: 'fp-sched',
      parallelism: 1,
      rate: 5,
      period: 10,
    });
    expect(await a.schedules.get(queuedId)).toMatchObject({
      queueName: 'fp-scheduled',
      flowControlKey: 'fp-sched',
      parallelism: 1,
    });
    expect((await a.schedules.get(queuedId)).rate).toBeUndefined();

    await a.flowControl.pause('fp-sched');
    await makeTickDue(scheduleId);
    await makeTickDue(queuedId);
    await waitFor(
      'both ticks waiting on the key',
      async () => ((await b.flowControl.get('fp-sched')).waitListSize === 2 ? true : undefined),
      { timeoutMs: 10_000, intervalMs: 20 },
    );
    expect(replicas.destination.requests).toHaveLength(0);
    await b.flowControl.resume('fp-sched');
    await delivered(2);
    expect(inFlight.most).toBe(1);
    expect(paths().sort()).toEqual(['/scheduled/plain', '/scheduled/queued']);
    for (const request of replicas.destination.requests)
      expect([scheduleId, queuedId]).toContain(request.headers['upstash-schedule-id']);
    await a.schedules.delete(scheduleId);
    await a.schedules.delete(queuedId);
  });

  it('when a dead letter of a flow-controlled message is retried while its key is paused, then it waits and goes once the key is resumed', async () => {
    const [a, b] = clients;
    const { messageId } = await a.publishJSON({
      url: url('failing/once'),
      body: 'doomed',
      retries: 0,
      flowControl: { key: 'fp-dlq', parallelism: 1 },
    });
    const letter = await waitFor(
      'the dead letter',
      async () => (await b.dlq.listMessages()).messages.find((m) => m.messageId === messageId),
      { timeoutMs: 10_000, intervalMs: 20 },
    );
    expect(letter).toMatchObject({ flowControlKey: 'fp-dlq', parallelism: 1 });
    replicas.destination.requests.length = 0;
    await a.flowControl.pause('fp-dlq');
    // The retry goes to the same URL, which now answers 200.
    replicas.destination.answer = () => ({ status: 200 });
    const { responses } = await b.dlq.retry(letter.dlqId);
    const retriedId = responses[0]!.messageId;
    await waitFor(
      'the retry waiting on its key',
      async () => ((await a.flowControl.get('fp-dlq')).waitListSize === 1 ? true : undefined),
      { timeoutMs: 5_000, intervalMs: 20 },
    );
    await replicas.deliveredPastThis(clients);
    expect(replicas.destination.requests).toHaveLength(0);
    expect(await a.messages.get(retriedId)).toMatchObject({ messageId: retriedId, flowControlKey: 'fp-dlq' });
    await b.flowControl.resume('fp-dlq');
    await delivered(1);
    expect(replicas.destination.requests[0]!.headers['upstash-message-id']).toBe(retriedId);
    await forgotten('fp-dlq');
  });

  it("when another tenant's token enqueues, batches, schedules or retries with a flow-control key here, then each is a 401 and nothing is stored", async () => {
    const snapshot = await snapshotDatabase(replicas.inspect);
    const intruder = replicas.sdkClient(gateways[0]!, { token: replicas.otherTarget!.token });
    const flowControl = { key: 'fp-shared', parallelism: 50 };
    const calls: [string, () => Promise<unknown>][] = [
      [
        'enqueue',
        () =>
          intruder.queue({ queueName: 'fp-orders' }).enqueueJSON({ url: url('x'), body: {}, flowControl }),
      ],
      ['batch', () => intruder.batchJSON([{ url: url('x'), body: {}, queueName: 'fp-orders', flowControl }])],
      [
        'schedule',
        () => intruder.schedules.create({ destination: url('x'), cron: '* * * * *', flowControl }),
      ],
      ['dlq retry', () => intruder.dlq.retry({ all: true })],
    ];
    for (const [name, call] of calls) {
      const outcome = await quietly(call).then(
        () => 'resolved',
        (err: Error) => err.message,
      );
      expect({ name, outcome }).toEqual({ name, outcome: expect.stringMatching(/401|Unauthorized|token/i) });
    }
    expect(await snapshotDatabase(replicas.inspect)).toEqual(snapshot);
    // Its own binding's queue and key are its own: this binding's key is not touched.
    const own = replicas.sdkClient(gateways[1]!, { target: replicas.otherTarget! });
    await own.queue({ queueName: 'fp-orders' }).enqueueJSON({ url: url('own'), body: {}, flowControl });
    await delivered(1);
    expect(await replicas.inspect.hexists(keys.flowControls, 'fp-shared')).toBe(0);
  });
});
