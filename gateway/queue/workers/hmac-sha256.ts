import { hash } from 'node:crypto';

/** SHA-256's block size: an HMAC key longer than this is hashed first (RFC 2104). */
const BLOCK_BYTES = 64;
const DIGEST_BYTES = 32;

/**
 * HMAC-SHA256 of ASCII text under one key, built from two one-shot `crypto.hash` calls over the
 * key's inner and outer pads prepared once (RFC 2104), instead of a `createHmac` per call: inside
 * the delivery loop each native Hash/Hmac object made per request cost 12-15 µs more than it does
 * in a loop of its own (docs/queue.md, Performance), and `crypto.hash` makes no object at all.
 * The returned function is synchronous and reuses its buffers, so calls must not interleave (they
 * cannot: nothing in it awaits). Only ASCII input is accepted (a JWT's signing input is base64url
 * and dots); anything else would be hashed as latin1, not as UTF-8.
 */
export function preparedHmacSha256(key: Buffer): (ascii: string) => string {
  const short = key.length > BLOCK_BYTES ? hash('sha256', key, 'buffer') : key;
  let inner = padded(short, 0x36, 512);
  const outer = padded(short, 0x5c, BLOCK_BYTES + DIGEST_BYTES);
  return (ascii) => {
    if (BLOCK_BYTES + ascii.length > inner.length) inner = grown(inner, BLOCK_BYTES + ascii.length);
    const end = BLOCK_BYTES + inner.write(ascii, BLOCK_BYTES, 'latin1');
    // The inner digest as a latin1 ('binary') string written into place: asked for as a Buffer, crypto.hash
    // made a new ArrayBuffer each call and took 7-9 µs instead of 2 in a loop of its own.
    outer.write(hash('sha256', inner.subarray(0, end), 'binary'), BLOCK_BYTES, 'latin1');
    return hash('sha256', outer, 'base64url');
  };
}

/** A buffer of `size` bytes starting with the key XOR `pad` over one block. */
function padded(key: Buffer, pad: number, size: number): Buffer {
  const buffer = Buffer.alloc(size);
  buffer.fill(pad, 0, BLOCK_BYTES);
  for (let i = 0; i < key.length; i++) buffer[i] = pad ^ (key[i] ?? 0);
  return buffer;
}

/** `buffer`'s pad block in a buffer with room for `bytes`. */
function grown(buffer: Buffer, bytes: number): Buffer {
  const bigger = Buffer.alloc(bytes * 2);
  buffer.copy(bigger, 0, 0, BLOCK_BYTES);
  return bigger;
}
