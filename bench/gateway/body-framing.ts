/**
 * EXPERIMENT, not product code: the HTTP/1.1 body framing splice-proxy-experiment.ts tracks while it
 * splices bytes, so that it knows where each request and response body ends without parsing it.
 */
/** Where a body ends: a count of bytes, chunked framing, the connection's close, or no body. */
export class BodyFraming {
  remaining = 0;
  chunked = false;
  untilClose = false;
  /** Chunked: 0 size line, 1 extension to end of line, 2 data, 3 CRLF after data, 4 trailer line start, 5 trailer line, 6 final LF. */
  private state = 0;
  private size = 0;

  reset(length: number, chunked: boolean, untilClose: boolean): void {
    this.remaining = length;
    this.chunked = chunked;
    this.untilClose = untilClose;
    this.state = 0;
    this.size = 0;
  }

  /** The offset in `buf` just past the body's end, or -1 when the body goes on past `buf`. */
  scan(buf: Buffer, start: number): number {
    if (this.untilClose) return -1;
    if (!this.chunked) {
      const available = buf.length - start;
      if (available < this.remaining) {
        this.remaining -= available;
        return -1;
      }
      const end = start + this.remaining;
      this.remaining = 0;
      return end;
    }
    let i = start;
    while (i < buf.length) {
      const byte = buf[i] as number;
      switch (this.state) {
        case 0:
          if (byte === 0x0a) this.endSizeLine();
          else if (byte === 0x3b || byte === 0x0d || byte === 0x20) this.state = 1;
          else this.size = this.size * 16 + parseInt(String.fromCharCode(byte), 16);
          i++;
          break;
        case 1:
          if (byte === 0x0a) this.endSizeLine();
          i++;
          break;
        case 2: {
          const take = Math.min(this.remaining, buf.length - i);
          this.remaining -= take;
          i += take;
          if (this.remaining === 0) {
            this.state = 3;
            this.remaining = 2;
          }
          break;
        }
        case 3:
          i++;
          if (--this.remaining === 0) this.state = 0;
          break;
        case 4:
          i++;
          if (byte === 0x0d) this.state = 6;
          else if (byte === 0x0a) return i;
          else this.state = 5;
          break;
        case 5:
          i++;
          if (byte === 0x0a) this.state = 4;
          break;
        case 6:
          i++;
          if (byte === 0x0a) return i;
          this.state = 5;
          break;
      }
    }
    return -1;
  }

  private endSizeLine(): void {
    if (this.size === 0) this.state = 4;
    else {
      this.state = 2;
      this.remaining = this.size;
    }
    this.size = 0;
  }
}
