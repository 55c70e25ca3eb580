import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A receiver on loopback that records each delivery's arrival, for the queue benches. */
export interface ArrivalReceiver {
  url: string;
  /** How long each answer waits. */
  delayMs: number;
  /** Arrival time (epoch ms) of each delivery, by path. */
  arrivals: { path: string; at: number; scheduleId: string | undefined; messageId: string }[];
  /** Resolves at the next delivery's arrival with its time (epoch ms, sub-ms), for round trips one at a time. */
  next(): Promise<number>;
  close(): Promise<void>;
}

export async function startArrivalReceiver(): Promise<ArrivalReceiver> {
  let waiting: ((at: number) => void)[] = [];
  const receiver: ArrivalReceiver = {
    url: '',
    delayMs: 0,
    arrivals: [],
    next: () => new Promise((resolve) => waiting.push(resolve)),
    close: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      receiver.arrivals.push({
        path: req.url ?? '',
        at: Date.now(),
        scheduleId: req.headers['upstash-schedule-id'] as string | undefined,
        messageId: String(req.headers['upstash-message-id']),
      });
      const at = performance.timeOrigin + performance.now();
      const woken = waiting;
      waiting = [];
      for (const resolve of woken) resolve(at);
      const answer = () => res.writeHead(200, { 'content-length': '0' }).end();
      if (receiver.delayMs > 0) setTimeout(answer, receiver.delayMs);
      else answer();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return receiver;
}
