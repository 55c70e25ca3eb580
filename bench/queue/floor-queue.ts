/**
 * The floor the queue gateway is measured against (bench/queue-publish.ts): the least a Node.js
 * process on the same stack does for a publish and for a delivery, as a process of its own so its
 * CPU time is its own.
 *   publish:  node:http, the body read, `Authorization: Bearer` compared, the message built and
 *             encoded with the gateway's codec, one EVALSHA that stores it (XADD), a 201 with its id;
 *   delivery: one XREADGROUP of up to the free slots, per entry one signed POST (the gateway's
 *             signer, a keep-alive agent) and one EVALSHA that acknowledges it (XACK and XDEL).
 * No events, no stream index, no entry check, no leases, no flow control or queues: what those
 * cost is the gateway's distance from this floor.
 *
 *   node --import tsx bench/queue/floor-queue.ts '<FloorSpec JSON>'   (prints `listening <url>`;
 *   the bench runs its bundle, startFloorQueue)
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { DELIVERY_GROUP, MESSAGE_FIELD, queueKeys } from '../../gateway/queue/core/keys.js';
import { decodeMessage, encodeMessage } from '../../gateway/queue/core/message-codec.js';
import { createMessage } from '../../gateway/queue/core/message.js';
import { createDeliverySigner } from '../../gateway/queue/workers/signer.js';
import type { ManagedProcess } from '../../local/process.js';
import { waitFor } from '../../local/wait.js';
import { startBundledProcess, type TsProcessOptions } from '../lib/processes.js';

export interface FloorSpec {
  redis: { host: string; port: number; password: string };
  keyPrefix: string;
  token: string;
  signingKey: string;
  /** Deliveries in flight at most (the gateway's SETTEE_QUEUE_WORKER_CONCURRENCY); 0: no delivery loop. */
  concurrency: number;
}

const STORE_LUA = `return redis.call('XADD', KEYS[1], '*', ARGV[1], ARGV[2])`;
const ACK_LUA = `redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
return redis.call('XDEL', KEYS[1], ARGV[2])`;
const BLOCK_MS = 2_000;
const PUBLISH_PATH = '/v2/publish/';

function redisOf(spec: FloorSpec): Redis {
  return new Redis({ ...spec.redis, protocol: 2, enableAutoPipelining: true });
}

function servePublishes(spec: FloorSpec, redis: Redis, stream: string): http.Server {
  const expected = createHash('sha256').update(spec.token).digest();
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      if (!timingSafeEqual(createHash('sha256').update(bearer).digest(), expected)) {
        res.writeHead(401, { 'content-length': 0 }).end();
        return;
      }
      const message = createMessage({
        destination: decodeURIComponent((req.url ?? '').slice(PUBLISH_PATH.length)),
        method: 'POST',
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
        body: Buffer.concat(chunks),
        retries: 3,
      });
      redis.evalsha(STORE_SHA, 1, stream, MESSAGE_FIELD, encodeMessage(message)).then(
        () => {
          const answer = `{"messageId":"${message.id}"}`;
          // The load generator reads Content-Length; without it Node would send the body chunked.
          res
            .writeHead(201, { 'content-type': 'application/json', 'content-length': answer.length })
            .end(answer);
        },
        () => res.writeHead(500, { 'content-length': 0 }).end(),
      );
    });
  });
}

async function deliverForever(spec: FloorSpec, redis: Redis, stream: string): Promise<never> {
  const blocking = new Redis({ ...spec.redis, protocol: 2 });
  const signer = createDeliverySigner(spec.signingKey);
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.concurrency });
  await redis.xgroup('CREATE', stream, DELIVERY_GROUP, '0', 'MKSTREAM').catch(() => undefined);
  let inFlight = 0;
  let slotFreed: (() => void) | undefined;
  const deliver = async (entryId: string, stored: Buffer): Promise<void> => {
    const message = decodeMessage(stored);
    const signature = signer.sign({ destination: message.destination, body: message.body });
    await new Promise<void>((resolve) => {
      const request = http.request(
        message.destination,
        {
          method: message.method,
          agent,
          headers: {
            ...message.headers,
            'upstash-signature': signature,
            'content-length': message.body.length,
          },
        },
        (response) => response.resume().on('end', resolve),
      );
      request.on('error', () => resolve());
      request.end(message.body);
    });
    await redis.evalsha(ACK_SHA, 1, stream, DELIVERY_GROUP, entryId);
  };
  for (;;) {
    if (inFlight >= spec.concurrency) await new Promise<void>((resolve) => (slotFreed = resolve));
    const reply = (await blocking.xreadgroupBuffer(
      'GROUP',
      DELIVERY_GROUP,
      'floor',
      'COUNT',
      spec.concurrency - inFlight,
      'BLOCK',
      BLOCK_MS,
      'STREAMS',
      stream,
      '>',
    )) as [Buffer, [Buffer, Buffer[]][]][] | null;
    for (const [id, fields] of reply?.[0]?.[1] ?? []) {
      inFlight += 1;
      void deliver(id.toString(), fields[1]!).finally(() => {
        inFlight -= 1;
        slotFreed?.();
        slotFreed = undefined;
      });
    }
  }
}

const sha = (lua: string): string => createHash('sha1').update(lua).digest('hex');
// Hashed once, as the gateway's LuaScript hashes its scripts: hashing per call cost the floor
// 0.87 us of CPU a publish and a delivery that no server needs to spend.
const STORE_SHA = sha(STORE_LUA);
const ACK_SHA = sha(ACK_LUA);

async function main(spec: FloorSpec): Promise<void> {
  // An exit of its own on SIGTERM, not the signal's default: node writes a --cpu-prof profile only
  // when the process exits, so a profiled floor can be set beside the profiled gateway.
  process.on('SIGTERM', () => process.exit(0));
  const redis = redisOf(spec);
  await redis.script('LOAD', STORE_LUA);
  await redis.script('LOAD', ACK_LUA);
  const stream = queueKeys(spec.keyPrefix).stream;
  const server = servePublishes(spec, redis, stream);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`listening http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  if (spec.concurrency > 0) await deliverForever(spec, redis, stream);
}

/**
 * Parent side: starts the floor process from its bundle, as the bench runs the gateway (with
 * `node`'s flags and output reader, as startBundledProcess takes them); resolves once it listens,
 * with its base URL.
 */
export async function startFloorQueue(
  spec: FloorSpec,
  node: Pick<TsProcessOptions, 'flags' | 'onLine'> = {},
): Promise<{ proc: ManagedProcess; baseUrl: string }> {
  const proc = await startBundledProcess(
    'floor-queue',
    'bench/queue/floor-queue.ts',
    [JSON.stringify(spec)],
    node,
  );
  const baseUrl = await waitFor(
    'the floor queue to listen',
    async () => /listening (\S+)/.exec(proc.output())?.[1],
    {
      timeoutMs: 30_000,
      abort: proc.exited,
    },
  );
  return { proc, baseUrl };
}

if (pathToFileURL(process.argv[1] ?? '').href === import.meta.url && process.argv[2])
  await main(JSON.parse(process.argv[2]) as FloorSpec);
