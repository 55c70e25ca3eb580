/**
 * A closed-loop publish load generator, run as its own process so it does not share an event
 * loop with what it measures. Two modes over the same messages:
 *   http: `connections` keep-alive HTTP/1.1 connections, each POSTing one publish (or one batch)
 *         and waiting for the whole response before the next (raw sockets, no client library);
 *   xadd: `connections` concurrent XADDs of the same stored message straight to Redis, which is
 *         what a publish costs at least.
 * Input: the JSON of PublishLoadSpec in argv[2]; output: one line of PublishLoadResult JSON.
 */
import net from 'node:net';
import { Redis } from 'ioredis';
import { encodeMessage } from '../../gateway/queue/message-codec.js';
import { createMessage } from '../../gateway/queue/message.js';
import { MESSAGE_FIELD, queueKeys } from '../../gateway/queue/keys.js';

export interface PublishLoadSpec {
  mode: 'http' | 'xadd';
  connections: number;
  durationMs: number;
  warmupMs: number;
  /** http: the publish or batch URL, the token and the body; xadd: the Redis and key prefix. */
  url?: string;
  token?: string;
  body?: string;
  /** Messages per request (a batch of n counts n). */
  messagesPerRequest?: number;
  redis?: { host: string; port: number; password: string; keyPrefix: string };
  destination?: string;
}

export interface PublishLoadResult {
  requests: number;
  messages: number;
  errors: number;
  non2xx: number;
  elapsedMs: number;
  requestsPerSecond: number;
  messagesPerSecond: number;
  latencyUs: { p50: number; p99: number; mean: number };
}

function summarize(
  latencies: number[],
  elapsedMs: number,
  counts: { errors: number; non2xx: number; perRequest: number },
): PublishLoadResult {
  const sorted = Float64Array.from(latencies).sort();
  const at = (p: number): number =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? 0;
  const requestsPerSecond = (latencies.length / elapsedMs) * 1_000;
  return {
    requests: latencies.length,
    messages: latencies.length * counts.perRequest,
    errors: counts.errors,
    non2xx: counts.non2xx,
    elapsedMs,
    requestsPerSecond,
    messagesPerSecond: requestsPerSecond * counts.perRequest,
    latencyUs: {
      p50: at(0.5),
      p99: at(0.99),
      mean: latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length),
    },
  };
}

async function runHttp(spec: PublishLoadSpec): Promise<PublishLoadResult> {
  const url = new URL(spec.url ?? '');
  const body = Buffer.from(spec.body ?? '');
  const head =
    `POST ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${spec.token}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  const request = Buffer.concat([Buffer.from(head, 'latin1'), body]);
  const latencies: number[] = [];
  const counts = { errors: 0, non2xx: 0, perRequest: spec.messagesPerRequest ?? 1 };
  let measuring = false;
  let stopAt = Infinity;
  const socketRun = (): Promise<void> =>
    new Promise((resolve) => {
      const socket = net.connect(Number(url.port), url.hostname);
      socket.setNoDelay(true);
      let buffer: Buffer = Buffer.alloc(0);
      let sentAt = 0n;
      const send = (): void => {
        if (Date.now() >= stopAt) return void socket.end();
        sentAt = process.hrtime.bigint();
        socket.write(request);
      };
      socket.on('connect', send);
      socket.on('data', (chunk: Buffer) => {
        buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
        for (;;) {
          const headEnd = buffer.indexOf('\r\n\r\n');
          if (headEnd < 0) return;
          const text = buffer.subarray(0, headEnd).toString('latin1');
          const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(text)?.[1] ?? 0);
          if (buffer.length < headEnd + 4 + length) return;
          buffer = buffer.subarray(headEnd + 4 + length);
          if (measuring) {
            latencies.push(Number(process.hrtime.bigint() - sentAt) / 1_000);
            const status = Number(text.slice(9, 12));
            if (status < 200 || status > 299) counts.non2xx += 1;
          }
          send();
        }
      });
      socket.on('error', () => {
        counts.errors += 1;
        resolve();
      });
      socket.on('close', () => resolve());
    });
  const connection = async (): Promise<void> => {
    while (Date.now() < stopAt) await socketRun();
  };
  const all = Array.from({ length: spec.connections }, connection);
  await new Promise((resolve) => setTimeout(resolve, spec.warmupMs));
  const started = Date.now();
  measuring = true;
  stopAt = started + spec.durationMs;
  await Promise.all(all);
  return summarize(latencies, Date.now() - started, counts);
}

async function runXadd(spec: PublishLoadSpec): Promise<PublishLoadResult> {
  const target = spec.redis!;
  // Auto-pipelined, as the gateway's own connection is.
  const redis = new Redis({
    host: target.host,
    port: target.port,
    password: target.password,
    protocol: 2,
    enableAutoPipelining: true,
  });
  const stream = queueKeys(target.keyPrefix).stream;
  const body = Buffer.from(spec.body ?? '');
  const latencies: number[] = [];
  const counts = { errors: 0, non2xx: 0, perRequest: 1 };
  let measuring = false;
  let stopAt = Infinity;
  const worker = async (): Promise<void> => {
    while (Date.now() < stopAt) {
      // A fresh message each time, as a publish would make: the id and encoding are part of the cost.
      const message = createMessage({
        destination: spec.destination ?? '',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        retries: 3,
      });
      const sentAt = process.hrtime.bigint();
      try {
        await redis.xadd(stream, '*', MESSAGE_FIELD, encodeMessage(message));
        if (measuring) latencies.push(Number(process.hrtime.bigint() - sentAt) / 1_000);
      } catch {
        counts.errors += 1;
      }
    }
  };
  const all = Array.from({ length: spec.connections }, worker);
  await new Promise((resolve) => setTimeout(resolve, spec.warmupMs));
  const started = Date.now();
  measuring = true;
  stopAt = started + spec.durationMs;
  await Promise.all(all);
  const result = summarize(latencies, Date.now() - started, counts);
  redis.disconnect();
  return result;
}

if (process.argv[2]) {
  const spec = JSON.parse(process.argv[2]) as PublishLoadSpec;
  (spec.mode === 'http' ? runHttp(spec) : runXadd(spec)).then(
    (result) => {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      process.exit(0);
    },
    (err: unknown) => {
      process.stderr.write(`${String(err)}\n`);
      process.exit(1);
    },
  );
}
