/**
 * A closed-loop HTTP/1.1 load generator, run as its own process so it does not share an event loop
 * with what it measures: `connections` keep-alive connections, each sending one request and waiting
 * for the whole response before the next, for `durationMs`. Responses must carry Content-Length
 * (every server measured here sends it). Started through `runLoad`.
 */
import { latencySummaryUs, rawHttpConnection, runClosedLoop } from '../lib/closed-loop.js';
import { runLoadProcess, serveLoadProcess } from '../lib/load-process.js';

export interface LoadSpec {
  url: string;
  connections: number;
  durationMs: number;
  /** Extra request headers, e.g. Authorization. */
  headers?: Record<string, string>;
  /** Load before timing starts (fills connection pools, warms JITs); default 0. */
  warmupMs?: number;
}

export interface LoadResult {
  requests: number;
  errors: number;
  /** Responses other than 2xx. */
  non2xx: number;
  elapsedMs: number;
  rps: number;
  latencyUs: { mean: number; p50: number; p90: number; p99: number; max: number };
  /** Little's law: rps x mean latency, which must come out close to `connections` in a closed loop. */
  littleConcurrency: number;
}

async function run(spec: LoadSpec): Promise<LoadResult> {
  const url = new URL(spec.url);
  const extra = Object.entries(spec.headers ?? {})
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const request = Buffer.from(
    `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n${extra}\r\n`,
    'latin1',
  );
  const tally = await runClosedLoop(
    { ...spec, warmupMs: spec.warmupMs ?? 0 },
    rawHttpConnection(url, request),
  );
  const latencyUs = latencySummaryUs(tally.latenciesUs);
  const rps = (tally.latenciesUs.length / tally.elapsedMs) * 1_000;
  return {
    requests: tally.latenciesUs.length,
    errors: tally.errors,
    non2xx: tally.non2xx,
    elapsedMs: tally.elapsedMs,
    rps,
    latencyUs,
    littleConcurrency: (rps * latencyUs.mean) / 1_000_000,
  };
}

serveLoadProcess(import.meta.url, run);

/** One run of this load generator in its own process. */
export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return runLoadProcess<LoadSpec, LoadResult>('bench/gateway/load-generator.ts', spec);
}
