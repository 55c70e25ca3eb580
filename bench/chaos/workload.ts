import { Client } from '@upstash/qstash';
import type { Random } from '../lib/seeded-random.js';
import type { SoakPayload } from './receiver.js';

/** An acknowledged publish: the gateway answered with a message id. */
export interface AckedPublish {
  op: string;
  kind: 'plain' | 'delayed' | 'queue' | 'flow-control' | 'batch';
  ackedAt: number;
  notBefore: number;
  /** The gateway replica's queue URL it was published through. */
  url: string;
  /** Upstash-Delay, s (kind 'delayed'). */
  delaySeconds?: number;
  /** The message id the SDK's answer gave it. */
  messageId: string;
}

/** An acknowledged CouchDB write: the gateway answered 201/202 with the document's content stored. */
export interface AckedWrite {
  instance: string;
  doc: string;
  content: string;
}

export interface Ledger {
  publishes: AckedPublish[];
  writes: AckedWrite[];
  /** Attempts refused or failed (not acknowledged, so not checked): by kind. */
  failed: Map<string, number>;
}

export const QUEUE_NAME = 'chaos-queue';
export const QUEUE_PARALLELISM = 2;
export const FLOW_CONTROL_PARALLELISM = 1;

const PUBLISH_TIMEOUT_MS = 20_000;
const WRITE_TIMEOUT_MS = 60_000;

/** One publish of a random kind through a random gateway replica, recorded when acknowledged. */
export async function publishOne(options: {
  queueUrls: string[];
  token: string;
  destination: string;
  random: Random;
  ledger: Ledger;
  seq: number;
}): Promise<void> {
  const { random, ledger } = options;
  const baseUrl = options.queueUrls[Math.floor(random() * options.queueUrls.length)] ?? '';
  const client = new Client({ baseUrl, token: options.token, retry: false, enableTelemetry: false });
  const roll = random();
  const kind: AckedPublish['kind'] =
    roll < 0.35
      ? 'plain'
      : roll < 0.55
        ? 'delayed'
        : roll < 0.75
          ? 'queue'
          : roll < 0.9
            ? 'flow-control'
            : 'batch';
  const startedAt = Date.now();
  const op = (n: number): string => `p${options.seq}-${n}`;
  const body = (n: number, extra: Partial<SoakPayload> = {}): SoakPayload => ({
    op: op(n),
    notBefore: 0,
    ...extra,
  });
  const signal = AbortSignal.timeout(PUBLISH_TIMEOUT_MS);
  try {
    const acked = (
      ops: string[],
      answers: Array<{ messageId?: string }>,
      extra: { notBefore?: number; delaySeconds?: number } = {},
    ): void => {
      ops.forEach((o, i) =>
        ledger.publishes.push({
          op: o,
          kind,
          ackedAt: Date.now(),
          notBefore: extra.notBefore ?? 0,
          url: baseUrl,
          messageId: answers[i]?.messageId ?? '',
          ...(extra.delaySeconds !== undefined ? { delaySeconds: extra.delaySeconds } : {}),
        }),
      );
    };
    switch (kind) {
      case 'plain':
        acked(
          [op(0)],
          [
            await withTimeout(
              client.publishJSON({ url: options.destination, body: body(0), retries: 3 }),
              signal,
            ),
          ],
        );
        break;
      case 'delayed': {
        const delay = 2 + Math.floor(random() * 8);
        const notBefore = startedAt + delay * 1000;
        const answer = await withTimeout(
          client.publishJSON({ url: options.destination, body: body(0, { notBefore }), delay, retries: 3 }),
          signal,
        );
        acked([op(0)], [answer], { notBefore, delaySeconds: delay });
        break;
      }
      case 'queue':
        acked(
          [op(0)],
          [
            await withTimeout(
              client.queue({ queueName: QUEUE_NAME }).enqueueJSON({
                url: options.destination,
                body: body(0, { group: QUEUE_NAME, limit: QUEUE_PARALLELISM }),
                retries: 3,
              }),
              signal,
            ),
          ],
        );
        break;
      case 'flow-control':
        acked(
          [op(0)],
          [
            await withTimeout(
              client.publishJSON({
                url: options.destination,
                body: body(0, { group: 'fc:chaos', limit: FLOW_CONTROL_PARALLELISM }),
                flowControl: { key: 'chaos', parallelism: FLOW_CONTROL_PARALLELISM },
                retries: 3,
              }),
              signal,
            ),
          ],
        );
        break;
      case 'batch':
        acked(
          [0, 1, 2].map(op),
          (await withTimeout(
            client.batchJSON([0, 1, 2].map((n) => ({ url: options.destination, body: body(n), retries: 3 }))),
            signal,
          )) as Array<{ messageId?: string }>,
        );
        break;
    }
  } catch {
    ledger.failed.set(`publish ${kind}`, (ledger.failed.get(`publish ${kind}`) ?? 0) + 1);
  }
}

/** One document PUT through a random gateway replica to a random instance, recorded when acknowledged. */
export async function writeOne(options: {
  /** Instance name -> its base URLs with credentials, one per gateway replica. */
  instances: Map<string, string[]>;
  random: Random;
  ledger: Ledger;
  seq: number;
}): Promise<void> {
  const { random, ledger } = options;
  const names = [...options.instances.keys()];
  const instance = names[Math.floor(random() * names.length)] ?? '';
  const urls = options.instances.get(instance) ?? [];
  const base = urls[Math.floor(random() * urls.length)] ?? '';
  const doc = `doc-${options.seq}`;
  const content = `soak ${options.seq} ${random().toString(36).slice(2)}`;
  try {
    const response = await couchFetch(`${base}/soak/${doc}`, {
      method: 'PUT',
      body: JSON.stringify({ content }),
      signal: AbortSignal.timeout(WRITE_TIMEOUT_MS),
    });
    if (response.status === 201 || response.status === 202) ledger.writes.push({ instance, doc, content });
    else
      ledger.failed.set(`write ${response.status}`, (ledger.failed.get(`write ${response.status}`) ?? 0) + 1);
  } catch {
    ledger.failed.set('write (no answer)', (ledger.failed.get('write (no answer)') ?? 0) + 1);
  }
}

/** fetch with the URL's userinfo moved into a Basic Authorization header (fetch refuses userinfo). */
export async function couchFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const parsed = new URL(url);
  const auth = `Basic ${Buffer.from(`${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`).toString('base64')}`;
  parsed.username = '';
  parsed.password = '';
  return fetch(parsed, {
    ...init,
    headers: { 'content-type': 'application/json', ...(init.headers ?? {}), authorization: auth },
  });
}

function withTimeout<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    signal.addEventListener('abort', () => reject(new Error('publish timed out')), { once: true });
    promise.then(resolve, reject);
  });
}
