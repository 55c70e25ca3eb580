import { waitFor } from '../../../local/wait.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { quietly } from '../../helpers/queue/quietly.js';
import { InFlightGauge } from '../../helpers/queue/in-flight-gauge.js';
import { sleep, useSdkQueueSuite } from '../../helpers/queue/sdk-queue-suite.js';

/**
 * A queue's slot through the unchanged SDK on two gateway replicas: delayed messages keep their
 * place in the queue order, a callback or failure callback holds the slot until it is delivered,
 * retries keep it, a dead letter frees it, and a retried dead letter waits for one again.
 */
describe('queue slots with the @upstash/qstash SDK across two gateway replicas: held through delays, callbacks and retries, freed by dead letters', () => {
  const suite = useSdkQueueSuite();
  const { config, client, bodies, delivered } = suite;

  it('when messages are enqueued with Upstash-Delay or Upstash-Not-Before, then each is delivered no earlier than its time, and later ones wait behind it in the queue order', async () => {
    const queue = client().queue({ queueName: 'later' });
    await queue.upsert({ parallelism: 2 });
    const start = Date.now();
    // Due 4 s and 5 s ahead: the look for "nothing delivered yet" below comes after six SDK calls
    // and a second's pause, which a loaded machine can stretch past a 2 s delay.
    const first = await queue.enqueue({ url: `${suite.receiver.baseUrl}/later`, body: 'first', delay: 4 });
    await client(1)
      .queue({ queueName: 'later' })
      .enqueue({ url: `${suite.receiver.baseUrl}/later`, body: 'second' });
    const notBefore = Math.ceil(start / 1000) + 5;
    const [third] = await client(1).batch([
      { queueName: 'later', url: `${suite.receiver.baseUrl}/later`, body: 'third', notBefore },
    ]);
    // Waiting: in the queue's lag, and the messages API shows when it is due.
    expect((await queue.get()).lag).toBe(3);
    expect((await client().messages.get(first.messageId)).notBefore).toBeGreaterThanOrEqual(start + 4_000);
    expect((await client().messages.get((third as { messageId: string }).messageId)).notBefore).toBe(
      notBefore * 1000,
    );
    await sleep(1_000);
    expect(suite.receiver.deliveries).toHaveLength(0);
    await delivered(3);
    const at = new Map(suite.receiver.deliveries.map((d) => [d.body.toString(), d.at]));
    expect([...at.keys()].sort()).toEqual(['first', 'second', 'third']);
    expect(at.get('first')).toBeGreaterThanOrEqual(start + 4_000);
    // The undelayed second message did not overtake the delayed first, though a slot was free: it
    // started with it. With parallelism 2 the two are then in flight together, so either may reach
    // the receiver first (seen under load), and their arrival order is not asserted.
    expect(at.get('second')).toBeGreaterThanOrEqual(start + 4_000);
    expect(at.get('third')).toBeGreaterThanOrEqual(notBefore * 1000);
    expect((await queue.get()).lag).toBe(0);
  }, 30_000);

  it('when a queued message has a callback, or a failure callback, then the next message of its queue waits until that callback is delivered, as on QStash', async () => {
    const queue = client().queue({ queueName: 'called-back' });
    const answeredAt: Record<string, number> = {};
    suite.receiver.respond = async (delivery) => {
      const path = new URL(delivery.url).pathname;
      if (path !== '/work') {
        await sleep(800);
        answeredAt[path] = Date.now();
        return 200;
      }
      return delivery.body.toString() === 'fails' ? 500 : 200;
    };
    await queue.enqueue({
      url: `${suite.receiver.baseUrl}/work`,
      body: 'first',
      callback: `${suite.receiver.baseUrl}/callback`,
    });
    await queue.enqueue({
      url: `${suite.receiver.baseUrl}/work`,
      body: 'fails',
      retries: 0,
      failureCallback: `${suite.receiver.baseUrl}/failure-callback`,
    });
    await client(1)
      .queue({ queueName: 'called-back' })
      .enqueue({ url: `${suite.receiver.baseUrl}/work`, body: 'last' });
    await delivered(5);
    const received = suite.receiver.deliveries.map((d) => ({
      path: new URL(d.url).pathname,
      body: d.body.toString(),
      at: d.at,
    }));
    expect(received.map((r) => r.path)).toEqual([
      '/work',
      '/callback',
      '/work',
      '/failure-callback',
      '/work',
    ]);
    expect(received[2]!).toMatchObject({ body: 'fails' });
    expect(received[2]!.at).toBeGreaterThanOrEqual(answeredAt['/callback']!);
    expect(received[4]!).toMatchObject({ body: 'last' });
    expect(received[4]!.at).toBeGreaterThanOrEqual(answeredAt['/failure-callback']!);
    // The callbacks are not the queue's messages: they were not counted in its lag, nor filed under it.
    expect(
      (await client().logs({ filter: { queueName: 'called-back', state: 'CREATED' } })).logs,
    ).toHaveLength(3);
    const k = queueKeys(config.keyPrefix);
    await waitFor(
      'every slot given back',
      async () => (await suite.inspect.scard(k.queueActive('called-back'))) === 0 || undefined,
      { timeoutMs: 5_000 },
    );
  }, 30_000);

  it('when a dead letter of a queued message is retried, then it goes back into its queue and waits there for a slot, and another tenant cannot retry it', async () => {
    const queue = client().queue({ queueName: 'second-chance' });
    suite.receiver.respond = () => 500;
    const { messageId } = await queue.enqueue({
      url: `${suite.receiver.baseUrl}/again`,
      body: 'again',
      retries: 0,
    });
    const letter = await waitFor(
      'the dead letter',
      async () => (await client().dlq.listMessages({ filter: { queueName: 'second-chance' } })).messages[0],
      { timeoutMs: 15_000 },
    );
    expect(letter.messageId).toBe(messageId);
    await expect(quietly(() => client(0, suite.otherTarget.token).dlq.retry([letter.dlqId]))).rejects.toThrow(
      /invalid token/,
    );
    // The queue is busy: a message held until the test lets it go holds its only slot (a fixed
    // hold would end by itself, and a slow machine could look at the lag after it).
    let letGo = (): void => undefined;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    const answering = new InFlightGauge();
    suite.receiver.respond = async () => {
      await answering.during(held);
      return 200;
    };
    await queue.enqueue({ url: `${suite.receiver.baseUrl}/again`, body: 'busy' });
    await waitFor('the busy message held', async () => answering.started === 1 || undefined, {
      timeoutMs: 10_000,
    });
    const { responses } = await client(1).dlq.retry([letter.dlqId]);
    const retriedId = responses[0]!.messageId;
    expect(await client().messages.get(retriedId)).toMatchObject({ queueName: 'second-chance' });
    expect((await queue.get()).lag).toBe(1);
    expect(answering.started).toBe(1);
    letGo();
    await delivered(3);
    expect(bodies()).toEqual(['again', 'busy', 'again']);
    expect(suite.receiver.deliveries[2]!.headers['upstash-message-id']).toBe(retriedId);
    expect(answering.most).toBe(1);
  }, 30_000);

  it('when a queued message fails, then its retries keep its slot, and a dead-lettered one frees it for the next', async () => {
    const queue = client().queue({ queueName: 'retrying' });
    let failures = 0;
    suite.receiver.respond = (delivery) => {
      const body = delivery.body.toString();
      if (body === 'first' && failures === 0) {
        failures += 1;
        return 500;
      }
      return body === 'doomed' ? 500 : 200;
    };
    await queue.enqueue({ url: `${suite.receiver.baseUrl}/r`, body: 'first', retries: 2 });
    await queue.enqueue({ url: `${suite.receiver.baseUrl}/r`, body: 'doomed', retries: 0 });
    await queue.enqueue({ url: `${suite.receiver.baseUrl}/r`, body: 'last' });
    await delivered(4);
    expect(bodies()).toEqual(['first', 'first', 'doomed', 'last']);
    expect(suite.receiver.deliveries.map((d) => d.headers['upstash-retried'])).toEqual(['0', '1', '0', '0']);
    const dlq = await client().dlq.listMessages();
    expect(dlq.messages.map((m) => m.body)).toContain('doomed');
  });
});
