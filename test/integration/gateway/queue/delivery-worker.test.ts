import { waitFor } from '../../../../local/wait.js';
import type { QueueConfig } from '../../../../gateway/queue/core/config.js';
import type { Deliverer } from '../../../../gateway/queue/workers/http-delivery.js';
import { queueKeys } from '../../../../gateway/queue/core/keys.js';
import { createMessage, type MessageRequest } from '../../../../gateway/queue/core/message.js';
import { defaultBackoffMs } from '../../../../gateway/queue/workers/retry-policy.js';
import { useDeliveryFixture } from '../../../helpers/queue/delivery-fixture.js';

describe('delivery workers on a real Redis', () => {
  const f = useDeliveryFixture('worker-test');
  const setup = f.freshConfig;
  const startWorker = (config: QueueConfig, wrap: (d: Deliverer) => Deliverer = (d) => d) =>
    f.startWorker({ config, deliverer: wrap(f.httpDeliverer()) });

  const request = (path: string, overrides: Partial<MessageRequest> = {}): MessageRequest => ({
    destination: `${f.destination.baseUrl}${path}`,
    method: 'POST',
    headers: { 'content-type': 'text/plain' },
    body: Buffer.from(`body of ${path}`),
    retries: 3,
    ...overrides,
  });

  const deliveredIds = (): Set<string> =>
    new Set(
      f.destination.requests
        .filter((r) => r.headers['upstash-retried'] !== undefined)
        .map((r) => String(r.headers['upstash-message-id'])),
    );

  it('when two workers consume one binding, then they share the messages and each message is delivered once', async () => {
    const { config, store } = setup({ workerConcurrency: 4 });
    const byWorker = { a: 0, b: 0 };
    const counting = (name: 'a' | 'b') => (d: Deliverer) =>
      (async (r) => {
        byWorker[name] += 1;
        return d(r);
      }) as Deliverer;
    startWorker({ ...config, consumerName: 'worker-a' }, counting('a'));
    startWorker({ ...config, consumerName: 'worker-b' }, counting('b'));
    f.destination.answer = () => ({ status: 200 });
    const messages = Array.from({ length: 200 }, (_, i) => createMessage(request(`/share/${i}`)));
    await store.enqueue(messages);
    await waitFor(
      'all 200 deliveries',
      async () => (f.destination.requests.length >= 200 ? true : undefined),
      {
        timeoutMs: 20_000,
      },
    );
    await waitFor(
      'the stream to empty',
      async () => ((await f.redis.xlen(queueKeys(config.keyPrefix).stream)) === 0 ? true : undefined),
      {
        timeoutMs: 5_000,
      },
    );
    expect(f.destination.requests).toHaveLength(200);
    expect(deliveredIds()).toEqual(new Set(messages.map((m) => m.id)));
    expect(byWorker.a).toBeGreaterThan(0);
    expect(byWorker.b).toBeGreaterThan(0);
    expect(byWorker.a + byWorker.b).toBe(200);
  });

  it('when the poll interval and the read block are 10 s, then a message reaches an idle worker, and a burst a worker with every slot taken, without waiting for either', async () => {
    // Nothing on the delivery path may wait for a timer: an idle worker is woken by the blocking
    // read, a full one by its deliveries finishing. Each bound is an order of magnitude below 10 s.
    const { config, store } = setup({ pollIntervalMs: 10_000, blockMs: 10_000, workerConcurrency: 4 });
    startWorker(config);
    // The worker's first read, blocked in Redis (flag b), is what the first message must wake.
    const blockedInRead = async () =>
      ((await f.redis.client('LIST')) as string)
        .split('\n')
        .some((client) => / flags=b /.test(client) && / cmd=xreadgroup/.test(client));
    await waitFor(
      'the worker to be blocked in its read',
      async () => ((await blockedInRead()) ? true : undefined),
      {
        timeoutMs: 5_000,
        intervalMs: 20,
      },
    );
    const lone = createMessage(request('/idle'));
    const storedAt = Date.now();
    await store.enqueue([lone]);
    await waitFor(
      'the lone delivery',
      async () => (f.destination.attemptsOf(lone.id).length > 0 ? true : undefined),
      {
        timeoutMs: 5_000,
      },
    );
    expect(f.destination.attemptsOf(lone.id)[0]!.at - storedAt).toBeLessThan(1_000);

    // 40 messages through 4 slots, each answer 20 ms late: the read waits for free slots ten times.
    f.destination.answer = () => ({ status: 200, delayMs: 20 });
    const burst = Array.from({ length: 40 }, (_, i) => createMessage(request(`/burst/${i}`)));
    const burstAt = Date.now();
    await store.enqueue(burst);
    await waitFor('the burst', async () => (deliveredIds().size > burst.length ? true : undefined), {
      timeoutMs: 5_000,
    });
    expect(Math.max(...burst.map((m) => f.destination.attemptsOf(m.id)[0]!.at)) - burstAt).toBeLessThan(
      3_000,
    );
  });

  it('when a worker dies mid-delivery, then another worker reclaims its messages after the idle time and delivers them', async () => {
    // The dying worker's deliveries must not time out (a failed attempt, with a retry) before it is
    // killed below: 2 s leaves a loaded machine time to see all 10 arrive and cut it off.
    const { config, store } = setup({
      deliveryTimeoutMs: 2_000,
      reclaimIdleMs: 2_500,
      workerConcurrency: 10,
    });
    f.destination.answer = () => 'hang';
    const dying = startWorker({ ...config, consumerName: 'dying' });
    const messages = Array.from({ length: 10 }, (_, i) => createMessage(request(`/reclaim/${i}`)));
    await store.enqueue(messages);
    await waitFor(
      'the dying worker to have all 10 in flight',
      async () => (f.destination.requests.length === 10 ? true : undefined),
      {
        timeoutMs: 5_000,
      },
    );
    // Its process is gone: no more reads, and nothing it was doing can be written any more.
    dying.redis.disconnect();
    await dying.worker.stop(0);
    f.destination.answer = () => ({ status: 200 });
    const startedAt = Date.now();
    startWorker({ ...config, consumerName: 'survivor' });
    await waitFor(
      'the survivor to deliver all 10',
      async () =>
        messages.every((m) => f.destination.attemptsOf(m.id).some((r) => r.at >= startedAt))
          ? true
          : undefined,
      { timeoutMs: 10_000 },
    );
    for (const message of messages) {
      const [died, reclaimed] = f.destination.attemptsOf(message.id);
      expect(f.destination.attemptsOf(message.id)).toHaveLength(2);
      // Not before the entry had been idle for reclaimIdleMs on the dead consumer. Redis counts
      // idle time from the dead worker's read, a little before its request reached the
      // destination (tens of ms on a loaded machine), hence the margin.
      expect(reclaimed!.at - died!.at).toBeGreaterThanOrEqual(config.reclaimIdleMs - 100);
      // A crash is not a failed attempt: the retry count is unchanged.
      expect(reclaimed!.headers['upstash-retried']).toBe('0');
    }
    await waitFor(
      'the stream to empty',
      async () => ((await f.redis.xlen(queueKeys(config.keyPrefix).stream)) === 0 ? true : undefined),
      {
        timeoutMs: 5_000,
      },
    );
  });

  it('when a destination keeps failing, then the message is retried on the backoff schedule and then dead-lettered', async () => {
    const { config, store } = setup({ retryDelayScale: 0.01 });
    f.destination.answer = () => ({ status: 500 });
    startWorker(config);
    const message = createMessage(
      request('/failing', { retries: 2, headers: { 'content-type': 'text/plain', 'x-trace': 't1' } }),
    );
    await store.enqueue([message]);
    const [letter] = await waitFor(
      'the dead letter',
      async () => {
        const letters = await store.deadLetters(1);
        return letters.length > 0 ? letters : undefined;
      },
      { timeoutMs: 10_000 },
    );
    const attempts = f.destination.attemptsOf(message.id);
    expect(attempts.map((a) => a.headers['upstash-retried'])).toEqual(['0', '1', '2']);
    const gaps = [attempts[1]!.at - attempts[0]!.at, attempts[2]!.at - attempts[1]!.at];
    const expected = [defaultBackoffMs(1, config), defaultBackoffMs(2, config)];
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(expected[i]! - 5);
      // On this step of the schedule, not the next one (a loaded machine runs timers late, so the
      // bound is the next step's delay rather than a margin of a few hundred ms).
      expect(gap).toBeLessThan(defaultBackoffMs(i + 2, config));
    });
    expect(letter).toMatchObject({
      messageId: message.id,
      destination: message.destination,
      reason: 'retries-exhausted',
      lastStatus: 500,
      retried: 2,
      headers: { 'content-type': 'text/plain', 'x-trace': 't1' },
      lastResponseBody: 'answer',
    });
    expect(Buffer.from(letter!.bodyBase64, 'base64').equals(message.body)).toBe(true);
  });

  it('when Upstash-Retry-Delay is given, then the retries wait what its expression says', async () => {
    const { config, store } = setup();
    let calls = 0;
    f.destination.answer = () => (++calls <= 2 ? { status: 502 } : { status: 200 });
    startWorker(config);
    const message = createMessage(request('/expression', { retryDelay: '300 * (retried + 1)' }));
    await store.enqueue([message]);
    await waitFor(
      'the third attempt',
      async () => (f.destination.attemptsOf(message.id).length === 3 ? true : undefined),
      { timeoutMs: 10_000 },
    );
    const [a, b, c] = f.destination.attemptsOf(message.id);
    // 300 and 600 ms; the default backoff at this config's scale would wait under 150 ms.
    expect(b!.at - a!.at).toBeGreaterThanOrEqual(295);
    expect(c!.at - b!.at).toBeGreaterThanOrEqual(595);
    expect(c!.at - b!.at).toBeLessThan(2_500);
  });

  it('when the destination answers Retry-After, then the retry waits that long instead of the backoff', async () => {
    const { config, store } = setup();
    let calls = 0;
    f.destination.answer = () =>
      ++calls === 1 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200 };
    startWorker(config);
    const message = createMessage(request('/retry-after'));
    await store.enqueue([message]);
    await waitFor(
      'the second attempt',
      async () => (f.destination.attemptsOf(message.id).length === 2 ? true : undefined),
      { timeoutMs: 5_000 },
    );
    const [first, second] = f.destination.attemptsOf(message.id);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(995);
    expect(await store.deadLetters(1)).toEqual([]);
  });

  it('when the destination answers 489 with Upstash-NonRetryable-Error, then the message is dead-lettered without a retry', async () => {
    const { config, store } = setup();
    f.destination.answer = () => ({ status: 489, headers: { 'upstash-nonretryable-error': 'true' } });
    startWorker(config);
    const message = createMessage(request('/non-retryable', { retries: 5 }));
    await store.enqueue([message]);
    const [letter] = await waitFor(
      'the dead letter',
      async () => {
        const letters = await store.deadLetters(1);
        return letters.length > 0 ? letters : undefined;
      },
      { timeoutMs: 5_000 },
    );
    expect(letter).toMatchObject({
      messageId: message.id,
      reason: 'non-retryable',
      lastStatus: 489,
      retried: 0,
    });
    // Nothing is left to retry: no entry on the stream and none parked for a due time.
    const keys = queueKeys(config.keyPrefix);
    expect(await f.redis.xlen(keys.stream)).toBe(0);
    expect(await f.redis.zscore(keys.schedule, message.id)).toBeNull();
    expect(await f.redis.hexists(keys.scheduledMessages, message.id)).toBe(0);
    expect(f.destination.attemptsOf(message.id)).toHaveLength(1);
  });

  it('when a delivery times out, then it counts as a failure and is retried', async () => {
    const { config, store } = setup();
    let calls = 0;
    f.destination.answer = () => (++calls === 1 ? 'hang' : { status: 200 });
    startWorker(config);
    const message = createMessage(request('/slow', { timeoutMs: 200 }));
    await store.enqueue([message]);
    await waitFor(
      'the retry after the timeout',
      async () => (f.destination.attemptsOf(message.id).length === 2 ? true : undefined),
      {
        timeoutMs: 5_000,
      },
    );
    expect(f.destination.attemptsOf(message.id).map((a) => a.headers['upstash-retried'])).toEqual(['0', '1']);
  });

  it('when a stored entry is unreadable, then it is dead-lettered as unreadable and the worker carries on', async () => {
    const { config, store } = setup();
    startWorker(config);
    await f.redis.xadd(queueKeys(config.keyPrefix).stream, '*', 'm', 'this is not a message');
    const good = createMessage(request('/after-garbage'));
    await store.enqueue([good]);
    await waitFor(
      'the good message',
      async () => (f.destination.attemptsOf(good.id).length === 1 ? true : undefined),
      { timeoutMs: 5_000 },
    );
    const [letter] = await waitFor(
      'the dead letter',
      async () => {
        const letters = await store.deadLetters(1);
        return letters.length > 0 ? letters : undefined;
      },
      { timeoutMs: 5_000 },
    );
    expect(letter).toMatchObject({ reason: 'unreadable', messageId: 'unreadable' });
    expect(Buffer.from(letter!.bodyBase64, 'base64').toString()).toBe('this is not a message');
  });
});
