import { sendOrderEvents } from '../../../examples/queues/order-events.js';
import { waitFor } from '../../../local/wait.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { quietly } from '../../helpers/queue/quietly.js';
import { useSdkQueueSuite } from '../../helpers/queue/sdk-queue-suite.js';

/**
 * Queues (`client.queue({queueName}).*`) through the unchanged SDK, with two gateway replicas on
 * one database: QStash's shapes, pause, resume and delete, in-order delivery, at most
 * `parallelism` deliveries at once across both replicas, a batch split per queue in batch order,
 * and cancel and dead letters by queueName matching only that queue's messages.
 */
describe("queues with the @upstash/qstash SDK across two gateway replicas: their lifecycle, in-order delivery and parallelism, and each queue's messages kept apart", () => {
  const suite = useSdkQueueSuite();
  const { config, client, holdDeliveries, bodies, delivered } = suite;

  it("when a queue is upserted, read, listed, paused, resumed and deleted, then the SDK sees QStash's shapes at each step", async () => {
    const before = Date.now();
    const queue = client().queue({ queueName: 'orders' });
    await queue.upsert({ parallelism: 2 });
    const created = await queue.get();
    expect(created).toEqual({
      name: 'orders',
      parallelism: 2,
      paused: false,
      lag: 0,
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
    });
    expect(created.createdAt).toBeGreaterThanOrEqual(before);
    // The other replica answers from the same database.
    expect(await client(1).queue().list()).toEqual([created]);

    await queue.pause();
    expect((await queue.get()).paused).toBe(true);
    await queue.resume();
    expect((await queue.get()).paused).toBe(false);
    // The SDK's upsert sends parallelism 1 unless told: QStash sets both fields.
    await queue.upsert({ paused: true });
    const paused = await queue.get();
    expect(paused).toMatchObject({ paused: true, parallelism: 1, createdAt: created.createdAt });
    await client().queue({ queueName: 'audit' }).upsert({ parallelism: 1 });
    expect((await client().queue().list()).map((q) => q.name)).toEqual(['audit', 'orders']);

    await queue.delete();
    expect((await client().queue().list()).map((q) => q.name)).toEqual(['audit']);
    await expect(quietly(() => queue.get())).rejects.toThrow(/queue orders not found/);
    await expect(quietly(() => queue.pause())).rejects.toThrow(/queue orders not found/);
    // QStash answers 200 for a queue that does not exist.
    await expect(queue.delete()).resolves.toBeUndefined();
  });

  it('when messages are enqueued through both replicas into a queue of parallelism 1, then they are delivered one at a time in enqueue order', async () => {
    holdDeliveries(40);
    const sent: string[] = [];
    for (let i = 0; i < 12; i += 1) {
      const body = `order-${i}`;
      // enqueueJSON creates the queue on the first call (parallelism 1).
      const answer = await client(i % 2)
        .queue({ queueName: 'fifo' })
        .enqueueJSON({ url: `${suite.receiver.baseUrl}/orders`, body });
      expect(answer).toEqual({ messageId: expect.stringMatching(/^msg_/) });
      sent.push(JSON.stringify(body));
    }
    await delivered(12);
    expect(bodies()).toEqual(sent);
    expect(suite.inFlight.most).toBe(1);
    expect(await client().queue({ queueName: 'fifo' }).get()).toMatchObject({ parallelism: 1, lag: 0 });
    // The last slot goes back once its delivery is recorded, just after the receiver answered.
    await waitFor(
      'the slot of the last message back',
      async () =>
        (await suite.inspect.scard(queueKeys(config.keyPrefix).queueActive('fifo'))) === 0 || undefined,
      { timeoutMs: 5_000, intervalMs: 20 },
    );
  });

  it('when a queue has parallelism 3, then both replicas together never deliver more than 3 of its messages at once', async () => {
    await client().queue({ queueName: 'wide' }).upsert({ parallelism: 3 });
    holdDeliveries(150);
    const answers = await Promise.all(
      Array.from({ length: 15 }, (_, i) =>
        client(i % 2)
          .queue({ queueName: 'wide' })
          .enqueue({ url: `${suite.receiver.baseUrl}/wide`, body: `w-${String(i).padStart(2, '0')}` }),
      ),
    );
    expect(new Set(answers.map((a) => a.messageId)).size).toBe(15);
    await delivered(15);
    expect(suite.inFlight.most).toBe(3);
    expect(bodies().sort()).toEqual(Array.from({ length: 15 }, (_, i) => `w-${String(i).padStart(2, '0')}`));
  });

  it('when a queue is paused, then its messages wait (readable, counted as lag) and go out in order once it is resumed', async () => {
    const queue = client().queue({ queueName: 'held' });
    await queue.upsert({ parallelism: 2, paused: true });
    const ids: string[] = [];
    for (const body of ['a', 'b', 'c'])
      ids.push((await queue.enqueue({ url: `${suite.receiver.baseUrl}/h`, body })).messageId);
    await suite.deliveredPastThis();
    expect(suite.receiver.deliveries).toHaveLength(0);
    expect((await queue.get()).lag).toBe(3);
    const waiting = await client(1).messages.get(ids[1]!);
    expect(waiting).toMatchObject({
      messageId: ids[1],
      url: `${suite.receiver.baseUrl}/h`,
      queueName: 'held',
    });

    await client(1).queue({ queueName: 'held' }).resume();
    await delivered(3);
    expect(bodies().sort()).toEqual(['a', 'b', 'c']);
    expect((await queue.get()).lag).toBe(0);
  });

  it('when a queue with waiting messages is deleted, then those messages are cancelled and never delivered', async () => {
    const queue = client().queue({ queueName: 'doomed-queue' });
    await queue.upsert({ parallelism: 1, paused: true });
    const { messageId } = await queue.enqueue({ url: `${suite.receiver.baseUrl}/d`, body: 'never' });
    await queue.delete();
    await expect(quietly(() => client().messages.get(messageId))).rejects.toThrow(/not found/);
    const k = queueKeys(config.keyPrefix);
    expect(await suite.inspect.exists(k.queueWaiting('doomed-queue'), k.queueActive('doomed-queue'))).toBe(0);
    expect(await suite.inspect.hexists(k.scheduledMessages, messageId)).toBe(0);
    await suite.deliveredPastThis();
    expect(suite.receiver.deliveries).toHaveLength(0);
  });

  it('when the queue example (examples/queues) runs twice, then the fulfilment service gets each order event in order and the queues are not duplicated', async () => {
    const endpoints = {
      fulfilment: `${suite.receiver.baseUrl}/fulfilment`,
      invoices: `${suite.receiver.baseUrl}/invoices`,
    };
    const events = [
      { orderId: 'o-1', status: 'created' },
      { orderId: 'o-1', status: 'paid' },
      { orderId: 'o-1', status: 'shipped' },
    ] as const;
    holdDeliveries(20);
    await sendOrderEvents(client(), endpoints, events);
    await sendOrderEvents(client(1), endpoints, events);
    await delivered(8);
    const fulfilment = suite.receiver.deliveries.filter((d) => d.url.endsWith('/fulfilment'));
    expect(fulfilment.map((d) => JSON.parse(d.body.toString()).status)).toEqual([
      'created',
      'paid',
      'shipped',
      'created',
      'paid',
      'shipped',
    ]);
    expect(suite.receiver.deliveries.filter((d) => d.url.endsWith('/invoices'))).toHaveLength(2);
    expect((await client().queue().list()).map((q) => [q.name, q.parallelism])).toEqual([
      ['invoices', 2],
      ['order-events', 1],
    ]);
  });

  it('when a batch holds items for two queues and one for no queue, then each queue gets its items in batch order and the plain one goes out at once', async () => {
    await client().queue({ queueName: 'batch-a' }).upsert({ parallelism: 1, paused: true });
    const answers = await client(1).batchJSON([
      { url: `${suite.receiver.baseUrl}/a`, body: 'a1', queueName: 'batch-a' },
      { url: `${suite.receiver.baseUrl}/b`, body: 'b1', queueName: 'batch-b' },
      { url: `${suite.receiver.baseUrl}/plain`, body: 'plain' },
      { url: `${suite.receiver.baseUrl}/a`, body: 'a2', queueName: 'batch-a' },
      { url: `${suite.receiver.baseUrl}/b`, body: 'b2', queueName: 'batch-b' },
      { url: `${suite.receiver.baseUrl}/a`, body: 'a3', queueName: 'bad name' },
    ]);
    expect(answers.slice(0, 5)).toEqual(
      Array.from({ length: 5 }, () => ({ messageId: expect.stringMatching(/^msg_/) })),
    );
    expect(answers[5]).toEqual({
      error: expect.stringMatching(/batch item 5: queue "bad name" may contain only/),
    });
    await delivered(3);
    // batch-a is paused: its items wait; batch-b was created by the batch (parallelism 1).
    expect(
      bodies()
        .map((b) => JSON.parse(b) as string)
        .sort(),
    ).toEqual(['b1', 'b2', 'plain']);
    expect(
      bodies()
        .filter((b) => b.includes('"b'))
        .map((b) => JSON.parse(b) as string),
    ).toEqual(['b1', 'b2']);
    expect((await client().queue({ queueName: 'batch-a' }).get()).lag).toBe(2);
    await client().queue({ queueName: 'batch-a' }).resume();
    await delivered(5);
    expect(
      bodies()
        .slice(3)
        .map((b) => JSON.parse(b) as string),
    ).toEqual(['a1', 'a2']);
  });

  it('when messages are cancelled or dead letters listed by queueName, then only that queue’s are matched', async () => {
    await client().queue({ queueName: 'keep' }).upsert({ parallelism: 1, paused: true });
    await client().queue({ queueName: 'drop' }).upsert({ parallelism: 1, paused: true });
    const kept = await client()
      .queue({ queueName: 'keep' })
      .enqueue({ url: `${suite.receiver.baseUrl}/k`, body: 'k' });
    for (const body of ['d1', 'd2'])
      await client()
        .queue({ queueName: 'drop' })
        .enqueue({ url: `${suite.receiver.baseUrl}/d`, body });
    expect(await client().messages.cancel({ filter: { queueName: 'drop' } })).toEqual({ cancelled: 2 });
    expect(await client().messages.get(kept.messageId)).toMatchObject({ queueName: 'keep' });

    suite.receiver.respond = () => 500;
    await client()
      .queue({ queueName: 'keep' })
      .enqueue({ url: `${suite.receiver.baseUrl}/k`, body: 'fails', retries: 0 });
    await client().queue({ queueName: 'keep' }).resume();
    await waitFor(
      'a dead letter of queue keep',
      async () => {
        const page = await client().dlq.listMessages({ filter: { queueName: 'keep' } });
        return page.messages.length === 2 ? page.messages : undefined;
      },
      { timeoutMs: 15_000 },
    );
    expect((await client().dlq.listMessages({ filter: { queueName: 'drop' } })).messages).toHaveLength(0);
  });
});
