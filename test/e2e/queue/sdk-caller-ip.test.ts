import { Client } from '@upstash/qstash';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import {
  startRecordingDestination,
  type RecordingDestination,
} from '../../helpers/queue/recording-destination.js';
import { closeServer } from '../../helpers/queue/test-receiver.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';

/** The address the trusted proxy connects from; the gateway trusts it alone. */
const PROXY_ADDRESS = '127.0.0.2';
/** The publisher behind the trusted proxy, as its X-Forwarded-For names it. */
const BEHIND_PROXY = '203.0.113.7';
/** What a client that talks to the gateway directly claims to be. */
const SPOOFED = '198.51.100.66';
const WAIT = { timeoutMs: 10_000, intervalMs: 25 };

/**
 * An HTTP relay in front of the gateway that connects from `localAddress` and sets
 * X-Forwarded-For, as an Ingress controller does (or as a client forging the header does).
 */
async function startRelay(options: {
  gatewayUrl: string;
  localAddress: string;
  forwardedFor: string;
}): Promise<{ url: string; close(): Promise<void> }> {
  const gateway = new URL(options.gatewayUrl);
  const server = http.createServer((req, res) => {
    const upstream = http.request(
      {
        host: gateway.hostname,
        port: gateway.port,
        localAddress: options.localAddress,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, 'x-forwarded-for': options.forwardedFor },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => closeServer(server),
  };
}

/**
 * QStash's `callerIp`: the publisher's address recorded with each message, answered in messages,
 * dead letters, events and schedules, and a filter of the messages, DLQ and events routes. Only a
 * trusted proxy's X-Forwarded-For counts (SETTEE_GATEWAY_TRUSTED_PROXIES); anyone else's is ignored.
 */
describe('callerIp through the @upstash/qstash SDK', () => {
  let redis: RedisServer;
  let gateway: TestQueueGateway;
  let destination: RecordingDestination;
  let target: QueueTarget;
  let ingress: Awaited<ReturnType<typeof startRelay>>;
  let spoofer: Awaited<ReturnType<typeof startRelay>>;

  const clientVia = (baseUrl: string): Client =>
    new Client({
      baseUrl: baseUrl + new URL(gateway.queueUrl(target)).pathname,
      token: target.token,
      retry: false,
      enableTelemetry: false,
    });
  const hook = (name: string) => `${destination.baseUrl}/hooks/${name}`;

  beforeAll(async () => {
    redis = await startRedis();
    destination = await startRecordingDestination();
    destination.answer = (request) => ({ status: request.path.startsWith('/hooks/fail') ? 500 : 200 });
    target = testQueueTarget(redis, { namespace: 'tenant-ip', name: 'cache' });
    gateway = await startTestQueueGateway({
      config: testQueueConfig(),
      targets: [target],
      trustedProxies: [`${PROXY_ADDRESS}/32`],
    });
    ingress = await startRelay({
      gatewayUrl: gateway.baseUrl,
      localAddress: PROXY_ADDRESS,
      forwardedFor: `${BEHIND_PROXY}, 10.0.0.1`,
    });
    spoofer = await startRelay({
      gatewayUrl: gateway.baseUrl,
      localAddress: '127.0.0.1',
      forwardedFor: SPOOFED,
    });
  });

  afterAll(async () => {
    await ingress?.close();
    await spoofer?.close();
    await gateway?.stop();
    await destination?.close();
    await redis?.stop();
  });

  it('when messages are published behind the trusted proxy and with a spoofed X-Forwarded-For, then each records its real publisher, and a callerIp cancel takes only that publisher', async () => {
    const proxied = clientVia(ingress.url);
    const spoofing = clientVia(spoofer.url);
    const viaProxy = await proxied.publishJSON({ url: hook('later'), body: {}, delay: 3600 });
    const [viaBatch] = await proxied.batchJSON([{ url: hook('later'), body: {}, delay: 3600 }]);
    const queued = await proxied
      .queue({ queueName: 'ip' })
      .enqueueJSON({ url: hook('later'), body: {}, delay: 3600 });
    const spoofed = await spoofing.publishJSON({ url: hook('later'), body: {}, delay: 3600 });

    for (const { messageId } of [viaProxy, viaBatch!, queued])
      expect(await proxied.messages.get(messageId)).toMatchObject({ callerIp: BEHIND_PROXY });
    // The untrusted peer's header is ignored: the peer itself is the publisher.
    expect(await proxied.messages.get(spoofed.messageId)).toMatchObject({ callerIp: '127.0.0.1' });

    expect(await proxied.messages.cancel({ filter: { callerIp: SPOOFED } })).toEqual({ cancelled: 0 });
    expect(await proxied.messages.cancel({ filter: { callerIp: BEHIND_PROXY } })).toEqual({ cancelled: 3 });
    expect(await proxied.messages.get(spoofed.messageId)).toMatchObject({ messageId: spoofed.messageId });
    await proxied.messages.cancel(spoofed.messageId);
  });

  it("when dead letters of two publishers are listed, retried and deleted by callerIp, then only that publisher's are touched, and their events carry and filter by it", async () => {
    const proxied = clientVia(ingress.url);
    const direct = clientVia(gateway.baseUrl);
    const since = Date.now();
    const fromProxy = await proxied.publishJSON({ url: hook('fail-proxy'), body: {}, retries: 0 });
    const fromDirect = await direct.publishJSON({ url: hook('fail-direct'), body: {}, retries: 0 });
    const letters = await waitFor(
      'both dead letters',
      async () => {
        const { messages } = await direct.dlq.listMessages();
        return messages.length >= 2 ? messages : undefined;
      },
      WAIT,
    );
    const byId = Object.fromEntries(letters.map((l) => [l.messageId, l]));
    expect(byId[fromProxy.messageId]).toMatchObject({ callerIp: BEHIND_PROXY });
    expect(byId[fromDirect.messageId]).toMatchObject({ callerIp: '127.0.0.1' });

    const listed = await direct.dlq.listMessages({ filter: { callerIp: BEHIND_PROXY } });
    expect(listed.messages.map((m) => m.messageId)).toEqual([fromProxy.messageId]);

    // The case: POST /v2/dlq/retry?callerIp= answered 400 "no caller IPs recorded".
    const retried = await direct.dlq.retry({ filter: { callerIp: BEHIND_PROXY } });
    expect(retried.responses).toHaveLength(1);
    const retriedId = retried.responses[0]!.messageId;
    // Sent again, it is still the first publisher's message.
    await waitFor(
      'the retry dead-lettered',
      async () => {
        const { messages } = await direct.dlq.listMessages({ filter: { messageId: retriedId } });
        return messages[0];
      },
      WAIT,
    ).then((letter) => expect(letter).toMatchObject({ callerIp: BEHIND_PROXY }));

    expect(await direct.dlq.delete({ filter: { callerIp: '127.0.0.1' } })).toMatchObject({ deleted: 1 });
    const left = await direct.dlq.listMessages();
    expect(left.messages.map((m) => m.messageId)).toEqual([retriedId]);

    const { logs } = await direct.logs({
      filter: { callerIp: BEHIND_PROXY, state: 'CREATED', fromDate: since },
    });
    expect(new Set(logs.map((l) => l.messageId))).toEqual(new Set([fromProxy.messageId, retriedId]));
    expect(logs.every((l) => (l as { callerIp?: string }).callerIp === BEHIND_PROXY)).toBe(true);
  });

  it("when a schedule is created behind the trusted proxy, then it answers its creator's address under both of the SDK's spellings", async () => {
    const proxied = clientVia(ingress.url);
    const { scheduleId } = await proxied.schedules.create({ destination: hook('tick'), cron: '* * * * *' });
    expect(await proxied.schedules.get(scheduleId)).toMatchObject({
      callerIP: BEHIND_PROXY,
      callerIp: BEHIND_PROXY,
    });
    await proxied.schedules.delete(scheduleId);
  });
});
