import { randomFillSync } from 'node:crypto';

/**
 * Random bytes cut from a pool that is refilled when spent, as crypto.randomUUID does: asking
 * OpenSSL for a few bytes per message (an id per publish, a `jti` per delivery) cost more than
 * anything else those steps do themselves. Each byte is used once.
 */
const pool = Buffer.alloc(4_096);
let offset = pool.length;

/** `bytes` fresh random bytes (at most the pool's size), base64url-encoded. */
export function randomBase64Url(bytes: number): string {
  if (offset + bytes > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const text = pool.toString('base64url', offset, offset + bytes);
  offset += bytes;
  return text;
}
