/**
 * Where an HTTP/1.1 body ends, found from its framing while its bytes are passed on unread: a
 * proxy that splices sockets (docs/data-path.md, Option A) must know it to count the bytes, to end
 * the exchange's activity, to give the upstream connection back and to read the next request.
 * Chunked framing is read strictly, as RFC 9112 section 7.1 writes it: a size of hex digits, CRLF,
 * the data, CRLF, and a last chunk of size 0 followed by an empty line. A chunk extension, a
 * trailer, a blank after the size or a bare LF breaks the framing (FRAMING_BROKEN): llhttp refuses
 * the latter two, and the first two are rare enough that a proxy can cut the connection rather than
 * guess. test/unit/gateway/http/raw-request-head-llhttp.test.ts checks the ends against llhttp's.
 */

/** scan()'s answer when the body goes on past the bytes given. */
export const BODY_CONTINUES = -1;
/** scan()'s answer when the bytes are no valid framing: the connection cannot be read on. */
export const FRAMING_BROKEN = -2;

/** 12 hex digits (256 TiB): a larger size is refused rather than summed past 2^53. */
const MAX_SIZE_DIGITS = 12;

const enum Chunked {
  SizeStart,
  Size,
  SizeLf,
  Data,
  DataCr,
  DataLf,
  LastCr,
  LastLf,
}

/** One body's framing: a count of bytes, chunked, until the connection closes, or none. */
export class BodyFraming {
  /** Content-Length bytes still to come, or the current chunk's. */
  private remaining = 0;
  private chunked = false;
  private untilClose = false;
  private state = Chunked.SizeStart;
  private sizeDigits = 0;
  /** The body's own bytes scanned since takePayloadBytes last asked: chunk sizes and CRLFs are not. */
  private payload = 0;

  /** A body of `length` bytes (0: none), or chunked, or (a response without either) up to the close. */
  reset(framing: { length: number; chunked: boolean; untilClose: boolean }): void {
    this.remaining = framing.length;
    this.chunked = framing.chunked;
    this.untilClose = framing.untilClose;
    this.state = Chunked.SizeStart;
    this.sizeDigits = 0;
    this.payload = 0;
  }

  /**
   * The body's bytes scanned since the last call, without the chunked framing: what metering counts
   * as the body (the full path counts the bytes node:http and undici hand over, decoded).
   */
  takePayloadBytes(): number {
    const bytes = this.payload;
    this.payload = 0;
    return bytes;
  }

  /** Whether the body ends only when the connection closes (a response with neither length nor chunks). */
  get endsAtClose(): boolean {
    return this.untilClose;
  }

  /**
   * Scans `buf` from `start`: the offset just past the body's end, BODY_CONTINUES when it goes on
   * past `buf`, or FRAMING_BROKEN. Bytes may come split anywhere; each is scanned once.
   */
  scan(buf: Buffer, start: number): number {
    if (this.untilClose) {
      this.payload += buf.length - start;
      return BODY_CONTINUES;
    }
    if (!this.chunked) {
      const available = buf.length - start;
      if (available < this.remaining) {
        this.remaining -= available;
        this.payload += available;
        return BODY_CONTINUES;
      }
      const end = start + this.remaining;
      this.payload += this.remaining;
      this.remaining = 0;
      return end;
    }
    return this.scanChunked(buf, start);
  }

  private scanChunked(buf: Buffer, start: number): number {
    let i = start;
    while (i < buf.length) {
      if (this.state === Chunked.Data) {
        const take = Math.min(this.remaining, buf.length - i);
        this.remaining -= take;
        this.payload += take;
        i += take;
        if (this.remaining === 0) this.state = Chunked.DataCr;
        continue;
      }
      const byte = buf[i++] as number;
      switch (this.state) {
        case Chunked.SizeStart:
        case Chunked.Size: {
          const digit = hexValue(byte);
          if (digit >= 0) {
            if (++this.sizeDigits > MAX_SIZE_DIGITS) return FRAMING_BROKEN;
            this.remaining = this.remaining * 16 + digit;
            this.state = Chunked.Size;
          } else if (byte === 0x0d && this.state === Chunked.Size) this.state = Chunked.SizeLf;
          else return FRAMING_BROKEN;
          break;
        }
        case Chunked.SizeLf:
          if (byte !== 0x0a) return FRAMING_BROKEN;
          this.sizeDigits = 0;
          this.state = this.remaining === 0 ? Chunked.LastCr : Chunked.Data;
          break;
        case Chunked.DataCr:
          if (byte !== 0x0d) return FRAMING_BROKEN;
          this.state = Chunked.DataLf;
          break;
        case Chunked.DataLf:
          if (byte !== 0x0a) return FRAMING_BROKEN;
          this.state = Chunked.SizeStart;
          break;
        case Chunked.LastCr:
          if (byte !== 0x0d) return FRAMING_BROKEN;
          this.state = Chunked.LastLf;
          break;
        case Chunked.LastLf:
          if (byte !== 0x0a) return FRAMING_BROKEN;
          this.state = Chunked.SizeStart;
          return i;
      }
    }
    return BODY_CONTINUES;
  }
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}
