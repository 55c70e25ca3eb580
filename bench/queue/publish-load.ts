/**
 * A closed-loop publish load generator, run as its own process so it does not share an event
 * loop with what it measures. Two modes over the same messages:
 *   http: `connections` keep-alive HTTP/1.1 connections, each POSTing one publish (or one batch)
 *         and waiting for the whole response before the next (raw sockets, no client library);
 *   xadd: `connections` concurrent XADDs of the same stored message straight to Redis, which is
 *         what a publish costs at least.
 * Started through `runPublishLoad`.
 */
import { Redis } from 'ioredis';
import { encodeMessage } from '../../gateway/queue/core/message-codec.js';
import { createMessage } from '../../gateway/queue/core/message.js';
import { MESSAGE_FIELD, queueKeys } from '../../gateway/queue/core/keys.js';
import {
  latencySummaryUs,
  rawHttpConnection,
  runClosedLoop,
  type ClosedLoopTally,
} from '../lib/closed-loop.js';
import { runLoadProcess, serveLoadProcess } from '../lib/load-process.js';

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

function summarize(tally: ClosedLoopTally, perRequest: number): PublishLoadResult {
  const { mean, p50, p99 } = latencySummaryUs(tally.latenciesUs);
  const requests = tally.latenciesUs.length;
  const requestsPerSecond = (requests / tally.elapsedMs) * 1_000;
  return {
    requests,
    messages: requests * perRequest,
    errors: tally.errors,
    non2xx: tally.non2xx,
    elapsedMs: tally.elapsedMs,
    requestsPerSecond,
    messagesPerSecond: requestsPerSecond * perRequest,
    latencyUs: { p50, p99, mean },
  };
}

async function runHttp(spec: PublishLoadSpec): Promise<PublishLoadResult> {
  const url = new URL(spec.url ?? '');
  const body = Buffer.from(spec.body ?? '');
  const head =
    `POST ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${spec.token}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  const request = Buffer.concat([Buffer.from(head, 'latin1'), body]);
  const tally = await runClosedLoop(spec, rawHttpConnection(url, request));
  return summarize(tally, spec.messagesPerRequest ?? 1);
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
  const tally = await runClosedLoop(spec, async (loop) => {
    while (loop.running()) {
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
        loop.record(Number(process.hrtime.bigint() - sentAt) / 1_000);
      } catch {
        loop.error();
      }
    }
  });
  redis.disconnect();
  return summarize(tally, 1);
}

serveLoadProcess(import.meta.url, (spec: PublishLoadSpec) =>
  spec.mode === 'http' ? runHttp(spec) : runXadd(spec),
);

/** One run of this load generator in its own process. */
export function runPublishLoad(spec: PublishLoadSpec): Promise<PublishLoadResult> {
  return runLoadProcess<PublishLoadSpec, PublishLoadResult>('bench/queue/publish-load.ts', spec);
}
