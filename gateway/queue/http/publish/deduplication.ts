import { createHash } from 'node:crypto';
import { InvalidRequestError } from '../../core/errors.js';
import { single, type HeaderBag } from './publish-headers.js';

/**
 * Upstash-Deduplication-Id and Upstash-Content-Based-Deduplication: which key a message is
 * deduplicated by within the binding's window (the store keeps one message id per key). An
 * explicit id wins over the content hash, as the publisher named what makes two publishes one.
 */

/** Longer ids are refused: each one is kept in the database for the whole window. */
export const MAX_DEDUPLICATION_ID_LENGTH = 1_000;

/** What the content hash covers: where it goes and what arrives there. */
export interface DeduplicatedContent {
  destination: string;
  /** The delivered headers: Content-Type and the forwarded ones. */
  headers: Readonly<Record<string, string>>;
  body: Buffer;
}

/**
 * SHA-256 of the destination, the delivered headers (sorted by name) and the body, each framed by
 * its length so no two different messages hash the same by shifting bytes between fields.
 */
export function contentHash(content: DeduplicatedContent): string {
  const hash = createHash('sha256');
  const field = (value: string | Buffer): void => {
    const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
    const length = Buffer.alloc(8);
    length.writeBigUInt64BE(BigInt(bytes.length));
    hash.update(length).update(bytes);
  };
  field(content.destination);
  const names = Object.keys(content.headers).sort();
  field(String(names.length));
  for (const name of names) {
    field(name);
    field(content.headers[name]!);
  }
  field(content.body);
  return hash.digest('hex');
}

/**
 * The deduplication key of a publish (`id:<Upstash-Deduplication-Id>` or `content:<hash>`), or
 * undefined when it asks for none. `headers` have lower-case names.
 */
export function deduplicationKey(headers: HeaderBag, content: DeduplicatedContent): string | undefined {
  const id = single(headers, 'upstash-deduplication-id');
  const byContent = single(headers, 'upstash-content-based-deduplication');
  let contentBased = false;
  if (byContent !== undefined) {
    const flag = byContent.trim().toLowerCase();
    if (flag !== 'true' && flag !== 'false')
      throw new InvalidRequestError(
        `Upstash-Content-Based-Deduplication ${JSON.stringify(byContent)} is neither true nor false`,
      );
    contentBased = flag === 'true';
  }
  if (id !== undefined) {
    if (id.length === 0) throw new InvalidRequestError('Upstash-Deduplication-Id must not be empty');
    if (id.length > MAX_DEDUPLICATION_ID_LENGTH)
      throw new InvalidRequestError(
        `Upstash-Deduplication-Id is longer than ${MAX_DEDUPLICATION_ID_LENGTH} characters`,
      );
    return `id:${id}`;
  }
  return contentBased ? `content:${contentHash(content)}` : undefined;
}
