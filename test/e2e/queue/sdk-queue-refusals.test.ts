import { snapshotDatabase } from '../../helpers/queue/redis-snapshot.js';
import { quietly } from '../../helpers/queue/quietly.js';
import { useSdkQueueSuite } from '../../helpers/queue/sdk-queue-suite.js';

/**
 * Queue requests refused through the unchanged SDK on two gateway replicas: bad input and the
 * binding's quotas name the field, another binding's token is a 401, and nothing is stored.
 */
describe("queue requests refused with the @upstash/qstash SDK: bad input, the binding's quotas and another binding's token", () => {
  const suite = useSdkQueueSuite();
  const { client, bodies, delivered } = suite;

  it('when a queue request is bad or over the binding quota, then it is refused naming the field, and nothing is stored', async () => {
    const snapshot = await snapshotDatabase(suite.inspect);
    const queueUrl = `${suite.replicas[0]!.queueUrl(suite.target)}/v2/queues`;
    const post = (body: unknown) =>
      fetch(queueUrl, {
        method: 'POST',
        headers: { authorization: `Bearer ${suite.target.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const cases: [unknown, number, RegExp][] = [
      [{ queueName: 'q', parallelism: 0 }, 400, /parallelism must be >= 1/],
      [{ queueName: 'q', parallelism: 1.5 }, 400, /parallelism must be integer/],
      [{ queueName: 'q', parallelism: 9 }, 400, /parallelism 9 is above the binding's limit of 8/],
      [{ queueName: 'a/b' }, 400, /queueName "a\/b" may contain only/],
      [{ queueName: 'x'.repeat(129) }, 400, /queueName is longer than 128/],
      [{ parallelism: 1 }, 400, /must have required property 'queueName'/],
      [{ queueName: 'q', colour: 'red' }, 400, /must NOT have additional properties/],
    ];
    for (const [body, status, message] of cases) {
      const response = await post(body);
      expect({
        body,
        status: response.status,
        error: ((await response.json()) as { error: string }).error,
      }).toEqual({
        body,
        status,
        error: expect.stringMatching(message),
      });
    }
    const enqueueTooLate = await quietly(() =>
      client()
        .queue({ queueName: 'q' })
        .enqueue({ url: `${suite.receiver.baseUrl}/x`, body: 'x', delay: '8d' }),
    ).catch((err: Error) => err.message);
    expect(enqueueTooLate).toMatch(
      /Upstash-Delay 8d is longer than the queue's maximum delay of 7d \(QueueBinding spec.limits.maxDelay\)/,
    );
    const badName = await quietly(() =>
      client()
        .queue({ queueName: 'bad name' })
        .enqueue({ url: `${suite.receiver.baseUrl}/x`, body: 'x' }),
    ).catch((err: Error) => err.message);
    expect(badName).toMatch(/queue name \\"bad name\\" may contain only letters, digits/);
    // The SDK puts a name holding "/" in the path unencoded: a 400 naming the field, not a 404.
    const slashed: (() => Promise<unknown>)[] = [
      () => client().queue({ queueName: 'a/b' }).get(),
      () => client().queue({ queueName: 'a/b' }).pause(),
      () => client().schedules.get('a/b'),
      () => client().schedules.resume({ schedule: 'a/b' }),
    ];
    for (const run of slashed)
      expect(
        await quietly(run).then(
          () => 'answered',
          (err: Error) => err.message,
        ),
      ).toMatch(/(queue name|schedule id) \\"a\/b\\" may contain only/);
    expect(await snapshotDatabase(suite.inspect)).toEqual(snapshot);

    for (const name of ['q1', 'q2', 'q3', 'q4'])
      await client().queue({ queueName: name }).upsert({ parallelism: 1 });
    const overQuota = await post({ queueName: 'q5', parallelism: 1 });
    expect(overQuota.status).toBe(412);
    expect(await overQuota.json()).toEqual({
      error: expect.stringMatching(/queue limit reached.*\(4, QueueBinding spec.limits.maxQueues\)/),
    });
    const enqueueOver = await quietly(() =>
      client()
        .queue({ queueName: 'q5' })
        .enqueue({ url: `${suite.receiver.baseUrl}/x`, body: 'x' }),
    ).catch((err: Error) => err.message);
    expect(enqueueOver).toMatch(/queue limit reached/);
    expect((await client().queue().list()).map((q) => q.name)).toEqual(['q1', 'q2', 'q3', 'q4']);

    // A batch is answered per item: the item whose queue cannot be created names the quota in its
    // place; the plain item and the existing queue's item are stored and delivered.
    const batch = await client().batchJSON([
      { url: `${suite.receiver.baseUrl}/plain`, body: 'plain' },
      { url: `${suite.receiver.baseUrl}/over`, body: 'over', queueName: 'q5' },
      { url: `${suite.receiver.baseUrl}/q1`, body: 'q1', queueName: 'q1' },
    ]);
    expect(batch).toEqual([
      { messageId: expect.stringMatching(/^msg_/) },
      {
        error: expect.stringMatching(
          /^batch item 1: queue limit reached.*\(4, QueueBinding spec.limits.maxQueues\)/,
        ),
      },
      { messageId: expect.stringMatching(/^msg_/) },
    ]);
    await delivered(2);
    await suite.deliveredPastThis();
    expect(
      bodies()
        .map((b) => JSON.parse(b) as string)
        .sort(),
    ).toEqual(['plain', 'q1']);
    expect((await client().queue().list()).map((q) => q.name)).toEqual(['q1', 'q2', 'q3', 'q4']);

    // A schedule into a queue that could not be created is refused at creation, nothing stored.
    const scheduleOver = await quietly(() =>
      client().schedules.create({
        destination: `${suite.receiver.baseUrl}/s`,
        cron: '0 0 1 1 *',
        queueName: 'q5',
      }),
    ).catch((err: Error) => err.message);
    expect(scheduleOver).toMatch(/queue limit reached.*\(4, QueueBinding spec.limits.maxQueues\)/);
    expect((await client().schedules.list()).filter((s) => s.queueName === 'q5')).toEqual([]);
  });

  it("when another binding's token is used on this binding's queues, then every call is a 401 and nothing changes", async () => {
    await client().queue({ queueName: 'private' }).upsert({ parallelism: 1 });
    const snapshot = await snapshotDatabase(suite.inspect);
    const intruder = client(0, suite.otherTarget.token);
    const queue = intruder.queue({ queueName: 'private' });
    const calls: [string, () => Promise<unknown>][] = [
      ['upsert', () => queue.upsert({ parallelism: 5 })],
      ['get', () => queue.get()],
      ['list', () => queue.list()],
      ['pause', () => queue.pause()],
      ['resume', () => queue.resume()],
      ['delete', () => queue.delete()],
      ['enqueue', () => queue.enqueue({ url: `${suite.receiver.baseUrl}/x`, body: 'x' })],
    ];
    for (const [name, call] of calls) {
      const outcome = await quietly(call).then(
        () => 'resolved',
        (err: Error) => err.message,
      );
      expect({ name, outcome }).toEqual({ name, outcome: expect.stringMatching(/401|Unauthorized|token/i) });
    }
    expect(await snapshotDatabase(suite.inspect)).toEqual(snapshot);
  });
});
