import { CR, HTAB, isTokenByte, LF, SP } from './header-chars.js';

/**
 * Where an HTTP/1.1 body ends, found from its framing while its bytes are passed on unread: a
 * proxy that splices sockets (docs/data-path.md, Option A) must know it to count the bytes, to end
 * the exchange's activity, to give the upstream connection back and to read the next request.
 * Chunked framing is read as llhttp 9 (Node's parser, strict) reads it, byte for byte, because a
 * request's head has already gone to the instance when its body is read: what llhttp takes must be
 * taken, or a valid request is cut; what it refuses must break the framing (FRAMING_BROKEN).
 * That is chunk extensions (`;name`, `;name=token`, `;name="quoted"`, at most 16 KiB of them a
 * line, Node's limit) and trailer fields (header lines after the last chunk, as llhttp reads
 * headers: no folding, no bare CR or LF, no Content-Length or Transfer-Encoding, at most the
 * head's limit of name and value bytes, Node's rule). Neither is passed on: the full path (node:http
 * then undici) sends the data chunks alone, and Apache CouchDB answers a chunk extension with 500:
 * their bytes are listed in `dropped`. A `Connection: close` among the trailers ends the connection
 * after the exchange, as llhttp then refuses anything more on it. A blank after the size or a bare
 * LF breaks the framing, as in llhttp. test/unit/gateway/http/raw-request-head-llhttp.test.ts
 * checks the ends against llhttp's.
 */

/** scan()'s answer when the body goes on past the bytes given. */
export const BODY_CONTINUES = -1;
/** scan()'s answer when the bytes are no valid framing: the connection cannot be read on. */
export const FRAMING_BROKEN = -2;

/** 12 significant hex digits (256 TiB): a larger size is refused rather than summed past 2^53. */
const MAX_SIZE_DIGITS = 12;
/** Node's kMaxChunkExtensionsSize: the bytes of a size line's extension names and values. */
const MAX_EXTENSION_BYTES = 16_384;
/** Node's default maxHeaderSize, for a framing given no limit. */
const DEFAULT_MAX_TRAILER_BYTES = 16_384;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const enum Chunked {
  SizeStart,
  Size,
  /** After a `;`: a name (an empty one too, before `=` or `;`). */
  Extension,
  ExtensionName,
  ExtensionValue,
  Quoted,
  QuotedPair,
  QuotedEnd,
  SizeLf,
  Data,
  DataCr,
  DataLf,
  /** After the last chunk's size line: a trailer field, or the CR of the empty line. */
  TrailerStart,
  TrailerName,
  TrailerBlanks,
  TrailerValue,
  TrailerLf,
  LastLf,
  /** The last LF was read: the body ended there. */
  Done,
}

/** The trailer names llhttp reads for more than their value. */
const enum Special {
  None,
  Connection,
  ContentLength,
  TransferEncoding,
}

/** One body's framing: a count of bytes, chunked, until the connection closes, or none. */
export class BodyFraming {
  /**
   * After each scan(), the bytes of `buf` not to pass on, as [from, to) offset pairs in order:
   * chunk extensions (the `;` up to the line's CR) and trailer lines (up to the last CR).
   */
  readonly dropped: number[] = [];
  /** Content-Length bytes still to come, or the current chunk's. */
  private remaining = 0;
  private chunked = false;
  private untilClose = false;
  private state = Chunked.SizeStart;
  private sizeDigits = 0;
  private extensionBytes = 0;
  private trailerBytes = 0;
  private special = Special.None;
  /** A trailer's name, lower case, while it may still be a special one; its Connection value. */
  private text = '';
  private dropping = false;
  private close = false;
  /** The body's own bytes scanned since takePayloadBytes last asked: chunk sizes and CRLFs are not. */
  private payload = 0;

  /** `maxTrailerBytes`: the server's maxHeaderSize, which Node applies to trailers too. */
  constructor(private readonly maxTrailerBytes = DEFAULT_MAX_TRAILER_BYTES) {}

  /** A body of `length` bytes (0: none), or chunked, or (a response without either) up to the close. */
  reset(framing: { length: number; chunked: boolean; untilClose: boolean }): void {
    this.remaining = framing.length;
    this.chunked = framing.chunked;
    this.untilClose = framing.untilClose;
    this.state = Chunked.SizeStart;
    this.sizeDigits = 0;
    this.trailerBytes = 0;
    this.dropping = false;
    this.close = false;
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

  /** A trailer asked for the connection's close (llhttp then reads nothing more on it). */
  get closeRequested(): boolean {
    return this.close;
  }

  /**
   * Scans `buf` from `start`: the offset just past the body's end, BODY_CONTINUES when it goes on
   * past `buf`, or FRAMING_BROKEN. Bytes may come split anywhere; each is scanned once.
   */
  scan(buf: Buffer, start: number): number {
    this.dropped.length = 0;
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
    if (this.dropping) this.dropped.push(start);
    const end = this.scanChunked(buf, start);
    if (end === BODY_CONTINUES && this.dropping) this.dropped.push(buf.length);
    return end;
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
      // A size and the CRLFs around the data, inline: most framing bytes are these.
      switch (this.state) {
        case Chunked.SizeStart:
        case Chunked.Size: {
          const digit = hexValue(byte);
          if (digit >= 0) {
            // Leading zeros are no digits of the size: llhttp reads any number of them.
            if ((this.remaining > 0 || digit > 0) && ++this.sizeDigits > MAX_SIZE_DIGITS)
              return FRAMING_BROKEN;
            this.remaining = this.remaining * 16 + digit;
            this.state = Chunked.Size;
            break;
          }
          if (this.state === Chunked.SizeStart) return FRAMING_BROKEN;
          if (byte === CR) this.state = Chunked.SizeLf;
          else if (byte === 0x3b) {
            this.beginDrop(i - 1);
            this.extensionBytes = 0;
            this.state = Chunked.Extension;
          } else return FRAMING_BROKEN;
          break;
        }
        case Chunked.SizeLf:
          if (byte !== LF) return FRAMING_BROKEN;
          this.sizeDigits = 0;
          if (this.remaining > 0) this.state = Chunked.Data;
          else {
            this.trailerBytes = 0;
            this.state = Chunked.TrailerStart;
          }
          break;
        case Chunked.DataCr:
          if (byte !== CR) return FRAMING_BROKEN;
          this.state = Chunked.DataLf;
          break;
        case Chunked.DataLf:
          if (byte !== LF) return FRAMING_BROKEN;
          this.state = Chunked.SizeStart;
          break;
        default:
          if (!this.step(byte, i - 1)) return FRAMING_BROKEN;
          if (this.state === Chunked.Done) {
            this.state = Chunked.SizeStart;
            return i;
          }
      }
    }
    return BODY_CONTINUES;
  }

  /** One byte of an extension or the trailers at offset `at`: false when it breaks the framing. */
  private step(byte: number, at: number): boolean {
    switch (this.state) {
      case Chunked.Extension:
        // `;` then CR: no name (llhttp refuses); a blank is no token character either.
        if (byte === CR) return false;
        this.state = Chunked.ExtensionName;
        return this.step(byte, at);
      case Chunked.ExtensionName:
        if (isTokenByte(byte)) return this.countExtension();
        if (byte === 0x3d) this.state = Chunked.ExtensionValue;
        else if (byte === 0x3b) this.state = Chunked.Extension;
        else if (byte === CR) this.endExtensions(at);
        else return false;
        return true;
      case Chunked.ExtensionValue:
        if (isTokenByte(byte)) return this.countExtension();
        if (byte === QUOTE) {
          this.state = Chunked.Quoted;
          return this.countExtension();
        }
        if (byte === 0x3b) this.state = Chunked.Extension;
        else if (byte === CR) this.endExtensions(at);
        else return false;
        return true;
      case Chunked.Quoted:
        if (byte === QUOTE) this.state = Chunked.QuotedEnd;
        else if (byte === BACKSLASH) this.state = Chunked.QuotedPair;
        else if (!isFieldByte(byte)) return false;
        return this.countExtension();
      case Chunked.QuotedPair:
        if (!isFieldByte(byte)) return false;
        this.state = Chunked.Quoted;
        return this.countExtension();
      case Chunked.QuotedEnd:
        if (byte === 0x3b) this.state = Chunked.Extension;
        else if (byte === CR) this.endExtensions(at);
        else return false;
        return true;
      default:
        return this.stepTrailer(byte, at);
    }
  }

  /** A byte of the trailer section (llhttp's header states, as it reads them after the last chunk). */
  private stepTrailer(byte: number, at: number): boolean {
    switch (this.state) {
      case Chunked.TrailerStart:
        if (byte === CR) {
          if (this.dropping) this.endDrop(at);
          this.state = Chunked.LastLf;
          return true;
        }
        if (!isTokenByte(byte)) return false;
        if (!this.dropping) this.beginDrop(at);
        this.text = '';
        this.state = Chunked.TrailerName;
        return this.stepTrailer(byte, at);
      case Chunked.TrailerName:
        if (byte === 0x3a) {
          this.special = specialOf(this.text);
          this.text = '';
          // The request's Transfer-Encoding makes any Content-Length llhttp's error, from its name on.
          if (this.special === Special.ContentLength) return false;
          this.state = Chunked.TrailerBlanks;
          return true;
        }
        if (!isTokenByte(byte)) return false;
        if (this.text.length <= 17) this.text += String.fromCharCode(byte | 0x20);
        return this.countTrailer();
      case Chunked.TrailerBlanks:
        if (byte === SP || byte === HTAB) return true;
        if (byte === CR) {
          this.state = Chunked.TrailerLf;
          return true;
        }
        // After chunked, no other coding may follow in a request (llhttp; an empty value is none).
        if (this.special === Special.TransferEncoding) return false;
        this.state = Chunked.TrailerValue;
        return this.stepTrailer(byte, at);
      case Chunked.TrailerValue:
        if (byte === CR) {
          if (this.special === Special.Connection && hasCloseToken(this.text)) this.close = true;
          this.state = Chunked.TrailerLf;
          return true;
        }
        if (!isFieldByte(byte)) return false;
        if (this.special === Special.Connection) this.text += String.fromCharCode(byte);
        return this.countTrailer();
      case Chunked.TrailerLf:
        if (byte !== LF) return false;
        // A blank at the next line's start would fold this one: no token, so broken, as in llhttp.
        this.state = Chunked.TrailerStart;
        return true;
      case Chunked.LastLf:
        if (byte !== LF) return false;
        this.state = Chunked.Done;
        return true;
    }
    return false;
  }

  private countExtension(): boolean {
    return ++this.extensionBytes <= MAX_EXTENSION_BYTES;
  }

  /** Node counts a trailer's name and value bytes against maxHeaderSize, as it counts the head's. */
  private countTrailer(): boolean {
    return ++this.trailerBytes < this.maxTrailerBytes;
  }

  private endExtensions(at: number): void {
    this.endDrop(at);
    this.state = Chunked.SizeLf;
  }

  private beginDrop(at: number): void {
    this.dropping = true;
    this.dropped.push(at);
  }

  private endDrop(at: number): void {
    this.dropping = false;
    this.dropped.push(at);
  }
}

/**
 * Writes `buf`'s bytes from `start` to `last` less what `framing` dropped in its last scan;
 * write()'s answer, false when any write was buffered.
 */
export function writeKept(
  target: { write(bytes: Buffer): boolean },
  framing: BodyFraming,
  buf: Buffer,
  start: number,
  last: number,
): boolean {
  const { dropped } = framing;
  if (dropped.length === 0) return last > start ? target.write(buf.subarray(start, last)) : true;
  let flowing = true;
  let from = start;
  for (let k = 0; k < dropped.length; k += 2) {
    const to = Math.min(dropped[k] as number, last);
    if (to > from) flowing = target.write(buf.subarray(from, to)) && flowing;
    from = Math.max(from, dropped[k + 1] as number);
  }
  if (last > from) flowing = target.write(buf.subarray(from, last)) && flowing;
  return flowing;
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

/** HTAB, SP, VCHAR and obs-text: a field value's bytes, and a quoted pair's second. */
function isFieldByte(byte: number): boolean {
  return byte === HTAB || (byte >= SP && byte !== 0x7f);
}

function specialOf(name: string): Special {
  if (name === 'connection' || name === 'proxy-connection') return Special.Connection;
  if (name === 'content-length') return Special.ContentLength;
  if (name === 'transfer-encoding') return Special.TransferEncoding;
  return Special.None;
}

/**
 * llhttp's reading of a Connection value: an item (between commas, blanks before it skipped) is
 * the close token when it is `close` in any case followed by nothing but spaces (a tab makes it
 * another token).
 */
function hasCloseToken(value: string): boolean {
  return value.split(',').some((item) => /^[ \t]*close *$/i.test(item));
}
