import net from 'node:net';

/** What came back on a raw connection, and whether the server closed it. */
export interface RawExchange {
  /** Everything received, as latin1 (bytes one to one). */
  text: string;
  /** The server closed the connection (false: still open when the test stopped waiting). */
  closedByServer: boolean;
  /** From connecting to the close, or to giving up. */
  elapsedMs: number;
}

/**
 * A TCP connection to the gateway on which a test writes exactly the bytes it wants, when it wants
 * (requests no HTTP client would send: two Host headers, an absolute-form target, a head or body
 * that dribbles in), and reads whatever comes back until the server closes it or `waitMs` passes.
 */
export class RawConnection {
  private readonly socket: net.Socket;
  private readonly chunks: Buffer[] = [];
  private readonly startedAt = Date.now();
  private readonly closed: Promise<void>;
  private closedByServer = false;
  private givenUp = false;

  constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.on('data', (chunk: Buffer) => this.chunks.push(chunk));
    this.closed = new Promise((resolve) => {
      // A reset (the server destroyed it) is as much a close by the server as an orderly end.
      this.socket.on('error', () => undefined);
      this.socket.on('end', () => this.socket.end());
      this.socket.on('close', () => {
        if (!this.givenUp) this.closedByServer = true;
        resolve();
      });
    });
  }

  private get isOpen(): boolean {
    return !this.socket.destroyed && !this.socket.readableEnded;
  }

  write(data: string): void {
    if (this.isOpen) this.socket.write(data, 'latin1');
  }

  /** Sends the client's FIN after `data`: the connection is half-closed, the answer can still come. */
  end(data = ''): void {
    if (this.isOpen) this.socket.end(data, 'latin1');
  }

  /** Waits for the server to close the connection, for at most `waitMs`; then it is closed either way. */
  async finish(waitMs: number): Promise<RawExchange> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.closed, new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
    const elapsedMs = Date.now() - this.startedAt;
    this.givenUp = true;
    this.socket.destroy();
    return {
      text: Buffer.concat(this.chunks).toString('latin1'),
      closedByServer: this.closedByServer,
      elapsedMs,
    };
  }
}

/** Sends `request` on a fresh connection and returns what came back once the server closed it. */
export async function exchangeRaw(port: number, request: string, waitMs = 3_000): Promise<RawExchange> {
  const connection = new RawConnection(port);
  connection.write(request);
  return connection.finish(waitMs);
}

/** The status code of the first response in `text`, or undefined when there is none. */
export function statusOf(text: string): number | undefined {
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  return match ? Number(match[1]) : undefined;
}

/** The JSON body of a response read raw (no chunked encoding: the gateway's own answers have a length). */
export function jsonBodyOf(text: string): unknown {
  return JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
}
