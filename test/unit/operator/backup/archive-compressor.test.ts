import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import zlib from 'node:zlib';
import {
  ArchiveCompressor,
  SEGMENT_BYTES,
  type ArchivePiece,
  type CompressionOptions,
} from '../../../../operator/backup/archive-compressor.js';

/** The header zlib starts each gzip member with (no name, no time): 1f 8b, deflate, no flags, mtime 0. */
const MEMBER_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00]);

function members(gz: Buffer): number {
  let count = 0;
  for (let i = gz.indexOf(MEMBER_HEADER); i !== -1; i = gz.indexOf(MEMBER_HEADER, i + 1)) count++;
  return count;
}

async function compress(pieces: ArchivePiece[], options?: Partial<CompressionOptions>): Promise<Buffer> {
  return buffer(Readable.from(pieces).pipe(new ArchiveCompressor(options)));
}

const text = (n: number): ArchivePiece => ({
  bytes: Buffer.from(
    `${JSON.stringify({ type: 'docs', docs: [{ _id: `doc-${n}`, n, tags: ['a', 'b'] }] })}\n`,
  ),
  packed: false,
});
const packedChunk = (): ArchivePiece => ({
  bytes: Buffer.from(
    `${JSON.stringify({ type: 'chunk', data: crypto.randomBytes(48 * 1024).toString('base64') })}\n`,
  ),
  packed: true,
});

describe('ArchiveCompressor', () => {
  it('when text and packed pieces alternate across several segments, then gunzip gives back every byte in order', async () => {
    const pieces = [
      ...Array.from({ length: 5_000 }, (_, i) => text(i)),
      ...Array.from({ length: 30 }, packedChunk),
      ...Array.from({ length: 100 }, (_, i) => text(i)),
    ];
    const input = Buffer.concat(pieces.map((p) => p.bytes));
    expect(input.length).toBeGreaterThan(2 * SEGMENT_BYTES);
    const gz = await compress(pieces, { parallel: 3 });
    expect(zlib.gunzipSync(gz).equals(input)).toBe(true);
  });

  it('when text turns to packed and back, then each run is a gzip member of its own', async () => {
    const gz = await compress([text(1), packedChunk(), packedChunk(), text(2)]);
    expect(members(gz)).toBe(3);
  });

  it('when packed pieces get Huffman coding only, then base64 of random bytes comes back to about their raw size', async () => {
    const pieces = Array.from({ length: 40 }, packedChunk);
    const raw = 40 * 48 * 1024;
    const gz = await compress(pieces);
    expect(gz.length / raw).toBeGreaterThan(0.99);
    expect(gz.length / raw).toBeLessThan(1.03);
  });

  it('when packing is off, then packed pieces share members with the text', async () => {
    const gz = await compress([text(1), packedChunk(), text(2)], { packing: false });
    expect(members(gz)).toBe(1);
  });
});
