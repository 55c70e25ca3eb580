import { randomFillSync } from 'node:crypto';

/** One message as the queue keeps it, from publish until it is delivered or dead-lettered. */
export interface QueueMessage {
  /** `msg_...`, returned to the publisher and sent as Upstash-Message-Id. */
  id: string;
  /** The destination URL exactly as published; also the signature's `sub`. */
  destination: string;
  /** Upstash-Method, default POST. */
  method: string;
  /** Sent with every delivery: the Upstash-Forward-* headers without their prefix, and Content-Type. */
  headers: Record<string, string>;
  body: Buffer;
  /** Retries allowed after the first attempt (Upstash-Retries). */
  retries: number;
  /** Upstash-Retry-Delay: an expression in `retried` giving milliseconds. */
  retryDelay?: string;
  /** Upstash-Timeout, in milliseconds; the configured delivery timeout when absent. */
  timeoutMs?: number;
  /** Retries made so far: 0 on the first attempt (Upstash-Retried). */
  retried: number;
  /** Publish time, epoch milliseconds. */
  createdAt: number;
  /** First delivery not before this time, epoch ms (Upstash-Delay, Upstash-Not-Before). */
  notBefore?: number;
  /** Upstash-Label: a name to find the message by in the messages, DLQ and events APIs. */
  label?: string;
  /** The URL group it was published to, one message per endpoint; delivered as Upstash-Topic-Name. */
  topicName?: string;
  /** The schedule whose tick created it; delivered as Upstash-Schedule-Id. */
  scheduleId?: string;
}

/** What a publisher asks for; the queue adds id, retried and createdAt. */
export type MessageRequest = Omit<QueueMessage, 'id' | 'retried' | 'createdAt'>;

const ID_BYTES = 18;
/**
 * Ids are cut from a pool of random bytes refilled when spent, as crypto.randomUUID does: asking
 * OpenSSL for 18 bytes per publish cost more than anything else the publish does itself. Each
 * byte is used once.
 */
const idPool = Buffer.alloc(ID_BYTES * 512);
let idPoolOffset = idPool.length;

export function newMessageId(): string {
  if (idPoolOffset + ID_BYTES > idPool.length) {
    randomFillSync(idPool);
    idPoolOffset = 0;
  }
  const id = idPool.toString('base64url', idPoolOffset, idPoolOffset + ID_BYTES);
  idPoolOffset += ID_BYTES;
  return `msg_${id}`;
}

export function createMessage(request: MessageRequest, now = Date.now()): QueueMessage {
  return { ...request, id: newMessageId(), retried: 0, createdAt: now };
}
