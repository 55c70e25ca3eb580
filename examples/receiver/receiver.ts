import http from 'node:http';
import { Receiver } from '@upstash/qstash';

/**
 * A webhook receiver for Settee's queue, written as any QStash user would write one: it verifies
 * each delivery with the unchanged SDK's Receiver and answers 403 when the signature, the body or
 * the URL does not match, 200 otherwise.
 */

export interface ReceivedDelivery {
  method: string;
  /** The URL the delivery was sent to, as the receiver verifies it. */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface ReceiverServerOptions {
  currentSigningKey: string;
  /** VQUEUE_NEXT_SIGNING_KEY: deliveries are signed with it once the keys are rotated. */
  nextSigningKey: string;
  /** Called for each verified delivery; its return value (default 200) is the status answered. */
  onDelivery?: (delivery: ReceivedDelivery) => number | void | Promise<number | void>;
  /** Receiver's public base URL, when it differs from what the Host header says (behind a proxy). */
  publicBaseUrl?: string;
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export function createReceiverServer(options: ReceiverServerOptions): http.Server {
  // Verifies with the current key, then the next one: still valid for deliveries signed after a
  // rotation, until the receiver is given the new pair.
  const receiver = new Receiver({
    currentSigningKey: options.currentSigningKey,
    nextSigningKey: options.nextSigningKey,
  });
  return http.createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const base = options.publicBaseUrl ?? `http://${req.headers.host ?? 'localhost'}`;
      const url = new URL(req.url ?? '/', base).toString();
      const signature = req.headers['upstash-signature'];
      try {
        if (typeof signature !== 'string') throw new Error('no Upstash-Signature header');
        await receiver.verify({ signature, body: body.toString('utf8'), url });
      } catch (err) {
        res.writeHead(403, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: `invalid signature: ${(err as Error).message}` }));
        return;
      }
      const status =
        (await options.onDelivery?.({ method: req.method ?? 'GET', url, headers: req.headers, body })) ?? 200;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ received: true }));
    })().catch(() => {
      res.writeHead(500);
      res.end();
    });
  });
}
