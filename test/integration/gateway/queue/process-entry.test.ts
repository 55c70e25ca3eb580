import { waitFor } from '../../../../local/wait.js';
import type { QueueConfig } from '../../../../gateway/queue/core/config.js';
import type { DeadLetter } from '../../../../gateway/queue/core/dead-letter.js';
import type { Deliverer } from '../../../../gateway/queue/workers/http-delivery.js';
import { DELIVERY_GROUP, queueKeys } from '../../../../gateway/queue/core/keys.js';
import { PendingMessages } from '../../../../gateway/queue/stores/pending-messages.js';
import { processEntry } from '../../../../gateway/queue/workers/process-entry.js';
import { createDeliverySigner } from '../../../../gateway/queue/workers/signer.js';
import { createMessage, type MessageRequest } from '../../../../gateway/queue/core/message.js';
import type { MessageStore } from '../../../../gateway/queue/stores/message-store.js';
import { createMemoryLogger, type MemoryLogger } from '../../../helpers/memory-logger.js';
import { useDeliveryFixture } from '../../../helpers/queue/delivery-fixture.js';
import { BindingStores } from '../../../../gateway/queue/stores/binding-stores.js';

/**
 * Attempts that go wrong in ways other than an error status, through a delivery worker on a real
 * Redis and real HTTP to a destination on 127.0.0.1 (allowlisted, redirects followed): each must
 * count as an attempt, be retried and end dead-lettered, and the logs must name the destination
 * without its secrets.
 */
describe('processing a stream entry', () => {
  const f = useDeliveryFixture('entry-test');
  // Reclaiming after a minute: an entry left pending would outlast the test, not be retried in it.
  const setup = () => f.freshConfig({ reclaimIdleMs: 60_000 });
  const httpDeliverer = (): Deliverer => f.httpDeliverer(5);

  function startWorker(config: QueueConfig, deliverer: Deliverer): MemoryLogger {
    const memory = createMemoryLogger('debug');
    f.startWorker({ config, deliverer, logger: memory.logger });
    return memory;
  }

  const request = (url: string): MessageRequest => ({
    destination: url,
    method: 'POST',
    headers: { 'content-type': 'text/plain' },
    body: Buffer.from('payload'),
    retries: 2,
  });

  const deadLetter = (store: MessageStore): Promise<DeadLetter> =>
    waitFor(
      'the dead letter',
      async () => {
        const [letter] = await store.deadLetters(1);
        return letter;
      },
      { timeoutMs: 10_000 },
    );

  it('when a message is cancelled after a worker read its entry, then the worker does not send it and acknowledges it', async () => {
    const { config, store } = setup();
    const keys = queueKeys(config.keyPrefix);
    await store.ensureGroup();
    const message = createMessage(request(`${f.destination.baseUrl}/cancelled`));
    await store.enqueue([message]);
    const blocking = f.connectAsGateway(true);
    const [entry] = await store.readNew(blocking, 'holder', 10, 100);
    expect(await new PendingMessages(f.redis, keys).cancel([message.id])).toBe(1);
    const memory = createMemoryLogger('debug');
    const outcome = await processEntry(
      {
        store,
        consumer: 'holder',
        deliverer: httpDeliverer(),
        signer: createDeliverySigner(f.target.signingKey),
        logger: memory.logger,
        debug: memory.logger.isDebugEnabled(),
        policy: config,
        deliveryTimeoutMs: config.deliveryTimeoutMs,
        deadLetterLimits: { retentionMs: 86_400_000, maxCount: f.target.limits.maxDeadLetters },
        maxCallbackBodyBytes: config.maxBodyBytes,
        workflowEvents: new BindingStores({
          redis: f.redis,
          keys,
          config,
          target: f.target,
        }).workflowEvents(),
      },
      entry!,
    );
    expect(outcome).toBe('cancelled');
    expect(f.destination.attemptsOf(message.id)).toEqual([]);
    expect(((await f.redis.xpending(keys.stream, DELIVERY_GROUP)) as [number])[0]).toBe(0);
  });

  it('when the destination redirects to a Location that is not a URL, then each attempt fails, is retried and the message is dead-lettered', async () => {
    const { config, store } = setup();
    f.destination.answer = () => ({ status: 302, headers: { location: 'http://[' } });
    startWorker(config, httpDeliverer());
    const message = createMessage(request(`${f.destination.baseUrl}/bad-location`));
    await store.enqueue([message]);
    const letter = await deadLetter(store);
    expect(f.destination.attemptsOf(message.id).map((a) => a.headers['upstash-retried'])).toEqual([
      '0',
      '1',
      '2',
    ]);
    expect(letter).toMatchObject({
      messageId: message.id,
      reason: 'retries-exhausted',
      retried: 2,
      lastStatus: 302,
      lastError: "the 302 redirect's Location is not a URL",
    });
    expect(await f.redis.xlen(queueKeys(config.keyPrefix).stream)).toBe(0);
  });

  it('when delivering throws instead of returning a result, then it counts as a failed attempt, logged once each time, until dead-lettered', async () => {
    const { config, store } = setup();
    // Stands in for a bug in the deliverer: the one way to make it throw on purpose.
    const throwing: Deliverer = async () => {
      throw new TypeError('a bug in delivery');
    };
    const memory = startWorker(config, throwing);
    const message = createMessage(request(`${f.destination.baseUrl}/never-reached`));
    await store.enqueue([message]);
    const letter = await deadLetter(store);
    expect(letter).toMatchObject({
      messageId: message.id,
      reason: 'retries-exhausted',
      retried: 2,
      lastError: 'UNEXPECTED_DELIVERY_ERROR: a bug in delivery',
    });
    const unexpected = memory.entries.filter((e) => e.message === 'delivery attempt failed unexpectedly');
    expect(unexpected.map((e) => [e.level, e.attempt])).toEqual([
      ['error', 1],
      ['error', 2],
      ['error', 3],
    ]);
    expect(memory.entries.filter((e) => e.message === 'delivery could not be recorded')).toEqual([]);
  });

  it('when a destination with secrets in its userinfo, path and query keeps failing, then the warnings name its origin and hash only', async () => {
    const { config, store } = setup();
    f.destination.answer = () => ({ status: 500 });
    const memory = startWorker(config, httpDeliverer());
    const origin = f.destination.baseUrl;
    const url = `${origin.replace('//', '//hookuser:USERINFO-SECRET@')}/services/T0/B0/PATH-SECRET?token=QUERY-SECRET`;
    const message = createMessage(request(url));
    await store.enqueue([message]);
    await deadLetter(store);
    const warnings = memory.entries.filter((e) => e.level === 'warn');
    expect(warnings.map((e) => e.message)).toEqual([
      'delivery failed',
      'delivery failed',
      'delivery failed',
      'message dead-lettered',
    ]);
    for (const warning of warnings) {
      expect(warning).toMatchObject({
        destination: origin,
        destinationHash: expect.stringMatching(/^[0-9a-f]{12}$/),
      });
    }
    expect(new Set(warnings.map((e) => e.destinationHash)).size).toBe(1);
    expect(JSON.stringify(memory.entries)).not.toMatch(/SECRET|hookuser/);
  });
});
