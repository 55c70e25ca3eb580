import net from 'node:net';
import { quantileOfSorted } from './stats.js';

/** What one connection of a closed loop sees of the run it is part of. */
export interface LoopControl {
  /** False once the measured period is over: the connection should finish its request and stop. */
  running(): boolean;
  /** One answered request; counted only once warm-up is over. `ok` false counts it as non-2xx. */
  record(latencyUs: number, ok?: boolean): void;
  /** A failed connection or request; counted during warm-up too. */
  error(): void;
}

export interface ClosedLoopTally {
  /** Latencies of the measured requests in µs, sorted ascending. */
  latenciesUs: Float64Array;
  errors: number;
  non2xx: number;
  elapsedMs: number;
}

/**
 * A closed loop: `connections` copies of `connection` run side by side, each sending its next
 * request only once the last one is answered, through `warmupMs` of uncounted load (fills pools,
 * warms JITs) and then `durationMs` of measured load.
 */
export async function runClosedLoop(
  spec: { connections: number; durationMs: number; warmupMs: number },
  connection: (loop: LoopControl) => Promise<void>,
): Promise<ClosedLoopTally> {
  const latencies: number[] = [];
  let errors = 0;
  let non2xx = 0;
  let measuring = false;
  let stopAt = Infinity;
  const loop: LoopControl = {
    running: () => Date.now() < stopAt,
    record(latencyUs, ok = true) {
      if (!measuring) return;
      latencies.push(latencyUs);
      if (!ok) non2xx += 1;
    },
    error() {
      errors += 1;
    },
  };
  const all = Array.from({ length: spec.connections }, () => connection(loop));
  await new Promise((resolve) => setTimeout(resolve, spec.warmupMs));
  const started = Date.now();
  measuring = true;
  stopAt = started + spec.durationMs;
  await Promise.all(all);
  return {
    latenciesUs: Float64Array.from(latencies).sort(),
    errors,
    non2xx,
    elapsedMs: Date.now() - started,
  };
}

/**
 * One closed-loop connection that sends `request` (a whole HTTP/1.1 request, raw bytes, so no
 * client library sits in what is measured) over keep-alive sockets until the run ends, opening a
 * new socket whenever the server closes one. Responses must carry Content-Length.
 */
export function rawHttpConnection(target: URL, request: Buffer): (loop: LoopControl) => Promise<void> {
  const socketRun = (loop: LoopControl): Promise<void> =>
    new Promise((resolve) => {
      const socket = net.connect(Number(target.port), target.hostname);
      socket.setNoDelay(true);
      let buffer: Buffer = Buffer.alloc(0);
      let sentAt = 0n;
      const send = (): void => {
        if (!loop.running()) {
          socket.end();
          return;
        }
        sentAt = process.hrtime.bigint();
        socket.write(request);
      };
      socket.on('connect', send);
      socket.on('data', (chunk: Buffer) => {
        buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
        for (;;) {
          const headEnd = buffer.indexOf('\r\n\r\n');
          if (headEnd < 0) return;
          const head = buffer.subarray(0, headEnd).toString('latin1');
          const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
          if (buffer.length < headEnd + 4 + length) return;
          buffer = buffer.subarray(headEnd + 4 + length);
          const status = Number(head.slice(9, 12));
          loop.record(Number(process.hrtime.bigint() - sentAt) / 1_000, status >= 200 && status <= 299);
          send();
        }
      });
      socket.on('error', () => {
        loop.error();
        resolve();
      });
      socket.on('close', () => resolve());
    });
  return async (loop) => {
    while (loop.running()) await socketRun(loop);
  };
}

/** Mean and nearest-rank percentiles of a tally's latencies, in µs. */
export function latencySummaryUs(sorted: Float64Array): {
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
} {
  const at = (q: number): number => (sorted.length === 0 ? 0 : quantileOfSorted(sorted, q));
  return {
    mean: sorted.reduce((sum, value) => sum + value, 0) / Math.max(1, sorted.length),
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    max: sorted[sorted.length - 1] ?? 0,
  };
}
