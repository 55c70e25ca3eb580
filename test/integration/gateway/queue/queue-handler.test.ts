import net from 'node:net';
import { startRedis, type RedisServer } from '../../../../local/redis-server.js';
import type { QueueTarget } from '../../../../gateway/queue/core/binding-registry.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../../helpers/queue/queue-config.js';
import { testQueueTarget } from '../../../helpers/queue/test-queue-target.js';

interface RawExchange {
  head: string;
  /** Whether the gateway ended the connection within the wait. */
  closedByServer: boolean;
}

/** How long the answer's head may take: generous, for a loaded machine. */
const HEAD_DEADLINE_MS = 30_000;

/**
 * Sends `request` as raw bytes and reads the answer's head; once it has it, waits `closeWaitMs`
 * for the gateway to close. The wait starts at the head, not at the send: on a loaded machine the
 * answer itself took over 300 ms (the keep-alive case failed so once, 2026-11-28, load 30).
 */
function exchange(port: number, request: string, closeWaitMs: number): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let head: string | undefined;
    let timer = setTimeout(() => finish(false), HEAD_DEADLINE_MS);
    const finish = (closedByServer: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      if (head === undefined) reject(new Error(`no complete answer: ${JSON.stringify(received)}`));
      else resolve({ head, closedByServer });
    };
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const end = received.indexOf('\r\n\r\n');
      if (end < 0 || head !== undefined) return;
      head = received.slice(0, end);
      clearTimeout(timer);
      timer = setTimeout(() => finish(false), closeWaitMs);
    });
    socket.on('end', () => finish(true));
    socket.on('error', reject);
    socket.write(request);
  });
}

/** The queue's publish API on loopback, spoken to in raw HTTP/1.1 to see what happens to the connection. */
describe('the queue handler', () => {
  let redis: RedisServer;
  let gateway: TestQueueGateway;
  let target: QueueTarget;
  let limited: QueueTarget;
  let port: number;

  beforeAll(async () => {
    redis = await startRedis();
    target = testQueueTarget(redis);
    limited = testQueueTarget(redis, { name: 'limited', db: 1, limits: { maxRequestsPerSecond: 1 } });
    gateway = await startTestQueueGateway({
      config: testQueueConfig(),
      targets: [target, limited],
      workers: false,
    });
    port = Number(new URL(gateway.baseUrl).port);
  });
  afterAll(async () => {
    await gateway?.stop();
    await redis?.stop();
  });

  const publishHead = (headers: string): string =>
    `POST /queue/${target.namespace}/${target.name}/v2/publish/https://a.example/ HTTP/1.1\r\nHost: x\r\n${headers}\r\n`;

  it.each([
    ['a wrong token', () => 'Bearer wrong', /^HTTP\/1\.1 401 /],
    [
      'a token, but a declared length over the body limit',
      () => `Bearer ${target.token}`,
      /^HTTP\/1\.1 413 /,
    ],
  ])(
    'when a publish with %s declares a 50 MB body and sends 1 KB of it, then the answer says Connection: close and the gateway closes the connection',
    async (_name, authorization, status) => {
      const request =
        publishHead(`Authorization: ${authorization()}\r\nContent-Length: 50000000\r\n`) + 'x'.repeat(1_000);
      const { head, closedByServer } = await exchange(port, request, 3_000);
      expect(head).toMatch(status);
      expect(head).toMatch(/\r\nconnection: close/i);
      expect(closedByServer).toBe(true);
    },
  );

  it('when a publish to an unknown queue declares a 50 MB body, then the connection is closed after the 404', async () => {
    const request =
      'POST /queue/ns/nope/v2/publish/https://a.example/ HTTP/1.1\r\nHost: x\r\nContent-Length: 50000000\r\n\r\n';
    const { head, closedByServer } = await exchange(port, request, 3_000);
    expect(head).toMatch(/^HTTP\/1\.1 404 /);
    expect(closedByServer).toBe(true);
  });

  it('when a publish is refused after its body was read, then the connection is kept alive', async () => {
    const request =
      `POST /queue/${target.namespace}/${target.name}/v2/publish/not%20a%20url HTTP/1.1\r\nHost: x\r\n` +
      `Authorization: Bearer ${target.token}\r\nContent-Length: 2\r\n\r\n{}`;
    const { head, closedByServer } = await exchange(port, request, 300);
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head).toMatch(/\r\nconnection: keep-alive/i);
    expect(closedByServer).toBe(false);
  });

  it('when publishes with their bodies are refused at the burst limit, the later ones of a window without asking the database, then every 429 keeps the connection alive', async () => {
    const request =
      `POST /queue/${limited.namespace}/${limited.name}/v2/publish/not%20a%20url HTTP/1.1\r\nHost: x\r\n` +
      `Authorization: Bearer ${limited.token}\r\nContent-Length: 2\r\n\r\n{}`;
    // Six in at most two windows of one request each: a window holds three or more, so at
    // least one refusal comes after the window was found full.
    const heads: string[] = [];
    for (let i = 0; i < 6; i++) heads.push((await exchange(port, request, 20)).head);

    const refusals = heads.filter((head) => /^HTTP\/1\.1 429 /.test(head));
    expect(refusals.length).toBeGreaterThanOrEqual(3);
    for (const head of refusals) expect(head).toMatch(/\r\nconnection: keep-alive/i);
  });
});
