/**
 * A closed-loop publish load as users generate it, run as its own process: `inFlight` publishes
 * at a time, each next one sent when one returns, through
 *   sdk:   the official SDK's `Client.publish` (what applications call);
 *   fetch: Node's fetch (undici) with the same headers the SDK sends, no SDK around it;
 *   raw:   raw keep-alive sockets, no client library at all (bench/lib/closed-loop.ts).
 * Started through `runSdkPublishLoad`.
 */
import { Client } from '@upstash/qstash';
import { latencySummaryUs, rawHttpConnection, runClosedLoop, type LoopControl } from '../lib/closed-loop.js';
import { runLoadProcess, serveLoadProcess } from '../lib/load-process.js';

export type SdkLoadMode = 'sdk' | 'fetch' | 'raw';

export interface SdkPublishLoadSpec {
  mode: SdkLoadMode;
  /** The binding's VQUEUE_URL and VQUEUE_TOKEN. */
  queueUrl: string;
  token: string;
  destination: string;
  body: string;
  inFlight: number;
  durationMs: number;
  warmupMs: number;
}

export interface SdkPublishLoadResult {
  publishes: number;
  errors: number;
  non2xx: number;
  elapsedMs: number;
  publishesPerSecond: number;
  /** The measured period, epoch ms, so the parent can count the deliveries inside it. */
  measuredFrom: number;
  measuredTo: number;
  /** This process's CPU time per publish (user + system, µs), warm-up included at the same rate. */
  cpuUsPerPublish: number;
  latencyUs: { p50: number; p99: number; mean: number };
}

function timed(loop: LoopControl, publish: () => Promise<boolean>): Promise<void> {
  return (async () => {
    while (loop.running()) {
      const sentAt = process.hrtime.bigint();
      try {
        const ok = await publish();
        loop.record(Number(process.hrtime.bigint() - sentAt) / 1_000, ok);
      } catch {
        loop.error();
      }
    }
  })();
}

function connectionFor(spec: SdkPublishLoadSpec): (loop: LoopControl) => Promise<void> {
  const publishUrl = `${spec.queueUrl}/v2/publish/${spec.destination}`;
  if (spec.mode === 'sdk') {
    const client = new Client({ baseUrl: spec.queueUrl, token: spec.token, retry: false });
    return (loop) =>
      timed(loop, async () => {
        await client.publish({
          url: spec.destination,
          body: spec.body,
          headers: { 'content-type': 'application/json' },
        });
        return true;
      });
  }
  if (spec.mode === 'fetch') {
    const headers = {
      authorization: `Bearer ${spec.token}`,
      'content-type': 'application/json',
      'upstash-method': 'POST',
    };
    return (loop) =>
      timed(loop, async () => {
        const response = await fetch(publishUrl, { method: 'POST', headers, body: spec.body });
        await response.arrayBuffer();
        return response.ok;
      });
  }
  const url = new URL(publishUrl);
  const body = Buffer.from(spec.body);
  const head =
    `POST ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${spec.token}\r\n` +
    `Content-Type: application/json\r\nUpstash-Method: POST\r\nContent-Length: ${body.length}\r\n\r\n`;
  return rawHttpConnection(url, Buffer.concat([Buffer.from(head, 'latin1'), body]));
}

async function run(spec: SdkPublishLoadSpec): Promise<SdkPublishLoadResult> {
  const cpuBefore = process.cpuUsage();
  const tally = await runClosedLoop(
    { connections: spec.inFlight, durationMs: spec.durationMs, warmupMs: spec.warmupMs },
    connectionFor(spec),
  );
  const { mean, p50, p99 } = latencySummaryUs(tally.latenciesUs);
  const publishes = tally.latenciesUs.length;
  const measuredTo = Date.now();
  const cpu = process.cpuUsage(cpuBefore);
  const publishesWithWarmup = publishes * ((spec.durationMs + spec.warmupMs) / spec.durationMs);
  return {
    cpuUsPerPublish: (cpu.user + cpu.system) / Math.max(1, publishesWithWarmup),
    measuredFrom: measuredTo - tally.elapsedMs,
    measuredTo,
    publishes,
    errors: tally.errors,
    non2xx: tally.non2xx,
    elapsedMs: tally.elapsedMs,
    publishesPerSecond: (publishes / tally.elapsedMs) * 1_000,
    latencyUs: { p50, p99, mean },
  };
}

serveLoadProcess(import.meta.url, run);

/** One run of this load generator in its own process. */
export function runSdkPublishLoad(spec: SdkPublishLoadSpec): Promise<SdkPublishLoadResult> {
  return runLoadProcess<SdkPublishLoadSpec, SdkPublishLoadResult>('bench/queue/sdk-publish-load.ts', spec);
}
