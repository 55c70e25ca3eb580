import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A webhook receiver on loopback that answers 200 at once and counts what arrives. */
export interface CountingReceiver {
  url: string;
  received: number;
  /** When the first and the latest delivery since the last reset arrived (epoch ms, sub-ms). */
  firstAt: number;
  lastAt: number;
  /** Publish-to-delivery latencies (ms) of messages whose JSON body carries `sentAt` (epoch ms). */
  latenciesMs: number[];
  /** Starts counting afresh. */
  reset(): void;
  close(): Promise<void>;
}

export interface CountingReceiverOptions {
  /** Parse each body for `sentAt` (costs the receiver a JSON.parse per delivery). */
  recordLatency?: boolean;
}

const now = () => performance.timeOrigin + performance.now();

export async function startCountingReceiver(
  options: CountingReceiverOptions = {},
): Promise<CountingReceiver> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    if (options.recordLatency) req.on('data', (chunk: Buffer) => chunks.push(chunk));
    else req.resume();
    req.on('end', () => {
      const at = now();
      if (receiver.received === 0) receiver.firstAt = at;
      receiver.received += 1;
      receiver.lastAt = at;
      if (options.recordLatency) {
        const body = Buffer.concat(chunks).toString('utf8') || '{}';
        const sentAt = (JSON.parse(body) as { sentAt?: number }).sentAt;
        if (sentAt !== undefined) receiver.latenciesMs.push(at - sentAt);
      }
      res.writeHead(200, { 'content-length': '0' }).end();
    });
  });
  // The gateway keeps its connections to a destination open between deliveries.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const receiver: CountingReceiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received: 0,
    firstAt: 0,
    lastAt: 0,
    latenciesMs: [],
    reset() {
      receiver.received = 0;
      receiver.latenciesMs.length = 0;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return receiver;
}
