import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Random } from '../lib/seeded-random.js';

/** What every published body carries, so a delivery names its operation and its constraints. */
export interface SoakPayload {
  op: string;
  /** ms since epoch before which it must not arrive (publish start + delay), 0 for none. */
  notBefore: number;
  /** The queue or flow-control key whose parallelism bounds it, with that bound. */
  group?: string;
  limit?: number;
}

export interface Delivery {
  at: number;
  status: number;
  /** Its Upstash-Retried header and Upstash-Message-Id, to tell attempts apart in a lost op's evidence. */
  retried: string;
  messageId: string;
}

/**
 * The soak's destination on loopback: records each delivery by operation, answers most with 200,
 * some with a 500 on their first attempt (a retry follows) and some slowly, and tracks how many
 * deliveries of each parallelism group it holds at once.
 */
export class SoakReceiver {
  readonly deliveries = new Map<string, Delivery[]>();
  readonly early: string[] = [];
  readonly maxInFlight = new Map<string, { seen: number; limit: number }>();
  private readonly inFlight = new Map<string, number>();
  private server?: http.Server;
  url = '';

  constructor(private readonly random: Random) {}

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => void this.answer(req, Buffer.concat(chunks).toString('utf8'), res));
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  private async answer(req: http.IncomingMessage, text: string, res: http.ServerResponse): Promise<void> {
    const at = Date.now();
    let payload: SoakPayload;
    try {
      payload = JSON.parse(text) as SoakPayload;
    } catch {
      res.writeHead(200).end();
      return;
    }
    if (payload.notBefore && at < payload.notBefore) this.early.push(payload.op);
    const group = payload.group;
    if (group) {
      const now = (this.inFlight.get(group) ?? 0) + 1;
      this.inFlight.set(group, now);
      const max = this.maxInFlight.get(group);
      if (!max || now > max.seen) this.maxInFlight.set(group, { seen: now, limit: payload.limit ?? 0 });
    }
    const retried = String(req.headers['upstash-retried'] ?? '0');
    const firstAttempt = retried === '0';
    const roll = this.random();
    const status = firstAttempt && roll < 0.05 ? 500 : 200;
    if (roll > 0.97) await new Promise((resolve) => setTimeout(resolve, 2_000));
    if (group) this.inFlight.set(group, (this.inFlight.get(group) ?? 1) - 1);
    const list = this.deliveries.get(payload.op) ?? [];
    list.push({ at, status, retried, messageId: String(req.headers['upstash-message-id'] ?? '') });
    this.deliveries.set(payload.op, list);
    res.writeHead(status).end();
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
