/**
 * A closed-loop HTTP/1.1 load generator, run as its own process so it does not share an event loop
 * with what it measures: `connections` keep-alive connections, each sending one request and waiting
 * for the whole response before the next, for `durationMs`. Responses must carry Content-Length
 * (every server measured here sends it). Input: the JSON of LoadSpec in argv[2]; output: one line
 * of LoadResult JSON.
 */
import net from 'node:net';

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

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))] ?? 0;
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
  const latencies: number[] = [];
  let errors = 0;
  let non2xx = 0;
  let measuring = false;
  let stopAt = Infinity;

  /** One socket until the run ends or the server closes it (then the caller opens another). */
  const socketRun = (): Promise<void> =>
    new Promise((resolve) => {
      const socket = net.connect(Number(url.port), url.hostname);
      socket.setNoDelay(true);
      let buffer: Buffer = Buffer.alloc(0);
      let sentAt = 0n;
      const send = (): void => {
        if (Date.now() >= stopAt) {
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
          if (measuring) {
            latencies.push(Number(process.hrtime.bigint() - sentAt) / 1_000);
            if (status < 200 || status > 299) non2xx += 1;
          }
          send();
        }
      });
      socket.on('error', () => {
        errors += 1;
        resolve();
      });
      socket.on('close', () => resolve());
    });

  const connection = async (): Promise<void> => {
    while (Date.now() < stopAt) await socketRun();
  };
  const all = Array.from({ length: spec.connections }, connection);
  await new Promise((resolve) => setTimeout(resolve, spec.warmupMs ?? 0));
  const started = Date.now();
  measuring = true;
  stopAt = started + spec.durationMs;
  await Promise.all(all);
  const elapsedMs = Date.now() - started;
  const sorted = Float64Array.from(latencies).sort();
  const mean = latencies.reduce((sum, value) => sum + value, 0) / Math.max(1, latencies.length);
  const rps = (latencies.length / elapsedMs) * 1_000;
  return {
    requests: latencies.length,
    errors,
    non2xx,
    elapsedMs,
    rps,
    latencyUs: {
      mean,
      p50: percentile(sorted, 0.5),
      p90: percentile(sorted, 0.9),
      p99: percentile(sorted, 0.99),
      max: sorted[sorted.length - 1] ?? 0,
    },
    littleConcurrency: (rps * mean) / 1_000_000,
  };
}

if (process.argv[2]) {
  run(JSON.parse(process.argv[2]) as LoadSpec).then(
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
