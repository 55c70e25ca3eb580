import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/**
 * The archive's text as a stream of lines, one object each, holding the input back while the
 * consumer is behind: a readable buffer of a few lines, where readline's async iterator reads up
 * to 1,024 lines ahead (64 MB of attachment chunk records) before it pauses its input.
 */
export class ArchiveLines extends Transform {
  private readonly decoder = new StringDecoder('utf8');
  /** The text of the line being read, in the pieces it came in (joined once, at its end). */
  private pending: string[] = [];

  constructor() {
    super({ readableObjectMode: true, readableHighWaterMark: 4 });
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let text = this.decoder.write(chunk);
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n')) {
      this.pending.push(text.slice(0, newline));
      this.push(this.pending.join(''));
      this.pending = [];
      text = text.slice(newline + 1);
    }
    if (text) this.pending.push(text);
    done();
  }

  override _flush(done: TransformCallback): void {
    const last = this.pending.join('') + this.decoder.end();
    if (last) this.push(last);
    done();
  }
}
