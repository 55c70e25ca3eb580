import { waitFor } from '../../../local/wait.js';
import { useSdkQueueSuite } from '../../helpers/queue/sdk-queue-suite.js';

/**
 * Messages of several queues through the unchanged SDK on two gateway replicas: a batch is split
 * per queue in batch order, and cancelling or listing dead letters by queueName matches only
 * that queue's messages.
 */
describe('messages of several queues with the @upstash/qstash SDK: batches split per queue, cancel and dead letters by queueName', () => {
  const suite = useSdkQueueSuite();
  const { client, bodies, delivered } = suite;

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
