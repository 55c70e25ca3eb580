import { Transform, type TransformCallback } from 'node:stream';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

const gzip = promisify(zlib.gzip);

/**
 * A piece of the archive's text. `packed` says its bytes are base64 of data already compressed (an
 * image, an archive, random bytes): deflate's string matching finds nothing there, and Huffman
 * coding alone wins back base64's 6 bits a character at a fraction of the time.
 */
export interface ArchivePiece {
  bytes: Buffer;
  packed: boolean;
}

/** Uncompressed bytes per gzip member: the unit compressed on one thread. */
export const SEGMENT_BYTES = 1024 * 1024;

export interface CompressionOptions {
  /**
   * zlib level for the text (default 1: on the archive's documents 1.4x level 6's speed for a
   * ratio 4% worse; docs/backups.md has the bench).
   */
  level: number;
  /** Segments compressed at once (default 2, the machine's cores as CI has them). */
  parallel: number;
  /** Huffman coding only for packed pieces (default true); false compresses them as text. */
  packing: boolean;
}

export const DEFAULT_COMPRESSION: CompressionOptions = Object.freeze({
  level: 1,
  parallel: 2,
  packing: true,
});

/**
 * The archive's gzip, written as a series of gzip members of about SEGMENT_BYTES each, compressed
 * `options.parallel` at a time on libuv's thread pool beside the thread that reads CouchDB, and emitted in
 * order (pigz's approach; RFC 1952 allows members one after another, and gunzip reads them as one
 * stream, so archives written before this restore as they did). A member never mixes text with
 * packed pieces, so each is compressed the way that suits it. Memory: `parallel` segments in and
 * their outputs, whatever the instance holds.
 */
export class ArchiveCompressor extends Transform {
  private pieces: Buffer[] = [];
  private length = 0;
  private packed = false;
  private readonly inFlight: Promise<Buffer>[] = [];

  private readonly options: CompressionOptions;

  constructor(options: Partial<CompressionOptions> = {}) {
    super({ writableObjectMode: true, writableHighWaterMark: 4 });
    this.options = { ...DEFAULT_COMPRESSION, ...options };
  }

  override _transform(piece: ArchivePiece, _encoding: BufferEncoding, done: TransformCallback): void {
    this.accept(piece).then(() => done(), done);
  }

  override _flush(done: TransformCallback): void {
    this.finish().then(() => done(), done);
  }

  private async accept(piece: ArchivePiece): Promise<void> {
    const packed = piece.packed && this.options.packing;
    if (packed !== this.packed && this.length > 0) await this.dispatch();
    this.packed = packed;
    this.pieces.push(piece.bytes);
    this.length += piece.bytes.length;
    if (this.length >= SEGMENT_BYTES) await this.dispatch();
  }

  private async finish(): Promise<void> {
    if (this.length > 0) await this.dispatch();
    while (this.inFlight.length > 0) this.push(await this.inFlight.shift());
  }

  /** Starts compressing the segment; waits for the oldest one while more than `parallel` are on their way. */
  private async dispatch(): Promise<void> {
    const segment = Buffer.concat(this.pieces, this.length);
    this.pieces = [];
    this.length = 0;
    const { level } = this.options;
    const compressed = gzip(
      segment,
      this.packed ? { level, strategy: zlib.constants.Z_HUFFMAN_ONLY } : { level },
    );
    // Awaited in order below; a failure of a later one must not go unhandled meanwhile.
    compressed.catch(() => undefined);
    this.inFlight.push(compressed);
    while (this.inFlight.length > this.options.parallel) this.push(await this.inFlight.shift());
  }
}
