import type { QueueMessage } from './message.js';

/**
 * The stored form of a message: one line of JSON with everything but the body, a newline, then
 * the body's raw bytes. JSON.stringify never emits a raw newline, so the first one ends the
 * metadata, and the body needs no base64 (a third larger, and a copy).
 */

type StoredMetadata = Omit<QueueMessage, 'body'>;

const NEWLINE = 0x0a;

export class CorruptMessageError extends Error {
  readonly code = 'CORRUPT_MESSAGE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CorruptMessageError';
  }
}

export function encodeMessage(message: QueueMessage): Buffer {
  const { body, ...metadata } = message;
  const json = JSON.stringify(metadata satisfies StoredMetadata);
  // Written into one buffer: a `${json}\n` string, its own Buffer and a concat each made a copy.
  const length = Buffer.byteLength(json);
  const stored = Buffer.allocUnsafe(length + 1 + body.length);
  stored.write(json, 0, 'utf8');
  stored[length] = NEWLINE;
  body.copy(stored, length + 1);
  return stored;
}

export function decodeMessage(stored: Buffer): QueueMessage {
  const end = stored.indexOf(NEWLINE);
  if (end < 0) throw new CorruptMessageError('stored message has no metadata line');
  let metadata: StoredMetadata;
  try {
    metadata = JSON.parse(stored.subarray(0, end).toString('utf8')) as StoredMetadata;
  } catch (err) {
    throw new CorruptMessageError('stored message metadata is not JSON', { cause: err });
  }
  if (
    typeof metadata?.id !== 'string' ||
    typeof metadata.destination !== 'string' ||
    typeof metadata.method !== 'string' ||
    typeof metadata.retries !== 'number' ||
    typeof metadata.retried !== 'number' ||
    typeof metadata.headers !== 'object' ||
    metadata.headers === null
  ) {
    throw new CorruptMessageError('stored message metadata lacks a field');
  }
  // The parsed object is this call's own: the body is set on it rather than copied into another
  // with a spread, which costs 2 us a delivery on Node 20 (docs/queue.md, Performance).
  return Object.assign(metadata, { body: stored.subarray(end + 1) });
}
