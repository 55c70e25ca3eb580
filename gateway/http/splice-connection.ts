import type net from 'node:net';
import type { UpstreamOwner, UpstreamSocket } from './upstream-sockets.js';
import { BodyFraming, FRAMING_BROKEN, writeKept } from './body-framing.js';
import {
  HEAD_DECLINED,
  HEAD_INCOMPLETE,
  readRawRequestHead,
  type RawRequestHead,
} from './raw-request-head.js';
import { hasNoBody, readResponseHead, RESPONSE_BROKEN, RESPONSE_INCOMPLETE } from './response-head.js';
import { clientErrorResponse } from './client-error.js';
import { CR, LF } from './header-chars.js';
import { type ClientHead, failedExchangeResponse, writeResponseBytes } from './splice-response.js';
import type { SpliceExchange, SpliceFailure, SpliceOptions } from './splice-exchange.js';
import { SplitHeadWait } from './split-head-wait.js';
import { mayResend } from './upstream-resend.js';

/**
 * One client connection on the fast path (docs/data-path.md, Option A): each request head is read
 * with raw-request-head.ts and decided; a taken one is written to a pooled instance connection and
 * both bodies are spliced, only their framing tracked (body-framing.ts) so the exchange's end is
 * known: there the exchange ends (activity, meter), the instance connection goes back to the pool
 * and the next pipelined head is read. A head that is declined, not whole within a few reads a
 * second apart (node:http owns the headers timeout), or not taken hands the connection to node:http
 * for good.
 */
export class SpliceConnection implements UpstreamOwner {
  /** Bytes read and not yet forwarded: the next head, and anything pipelined after it. */
  private pending: Buffer | undefined;
  private exchange: SpliceExchange | undefined;
  /** A new instance connection is being made for `exchange`, which has not started. */
  private connecting = false;
  private upstream: UpstreamSocket | undefined;
  private head: RawRequestHead | undefined;
  private requestDone = false;
  /** The request went out once more after the instance closed its connection under it. */
  private resent = false;
  private responseHead: Buffer | undefined;
  private responseStarted = false;
  private responseClose = false;
  private keepAlive = true;
  private clientEnded = false;
  /** The gateway ended the connection: what the client still sends is not read. */
  private finished = false;
  private readonly headWait = new SplitHeadWait();
  private readonly requestBody: BodyFraming;
  private readonly responseBody: BodyFraming;
  private readonly onData = (chunk: Buffer): void => this.onClientData(chunk);
  private readonly onEnd = (): void => this.onClientEnd();
  private readonly onClose = (): void => this.onClientClose();
  private readonly onTimeout = (): void => this.onClientSilent();
  private readonly onError = (): void => undefined;

  constructor(
    readonly socket: net.Socket,
    private readonly options: SpliceOptions,
  ) {
    // Node applies maxHeaderSize to trailers too.
    this.requestBody = new BodyFraming(options.maxHeadBytes);
    this.responseBody = new BodyFraming(options.maxHeadBytes);
    socket.setNoDelay(true);
    socket.setTimeout(options.idleTimeoutMs);
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('close', this.onClose);
    socket.on('timeout', this.onTimeout);
    // 'close' follows an error; the exchange ends there.
    socket.on('error', this.onError);
  }

  /** No exchange in flight: a shutdown may close it now. */
  get idle(): boolean {
    return this.exchange === undefined;
  }

  private onClientData(chunk: Buffer): void {
    if (this.finished) return;
    if (this.exchange !== undefined && !this.connecting && !this.requestDone)
      return this.forwardRequestBody(chunk, 0);
    if (this.exchange === undefined) {
      this.pending = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk]);
      this.readHead();
    } else this.keep(chunk);
  }

  /**
   * Bytes pipelined during an exchange go back into the paused socket, read again once it ends. A
   * FIN behind them is then not read (no 'end') before their head is decided: a pause alone does
   * not hold back an 'end' with nothing buffered, and a head handed to node:http after the 'end'
   * can no longer be put back. Nothing more is read meanwhile.
   */
  private keep(bytes: Buffer): void {
    this.socket.pause();
    this.socket.unshift(bytes);
  }

  private readHead(): void {
    const buf = this.pending;
    if (buf === undefined) return;
    const head = readRawRequestHead(buf, this.options.maxHeadBytes);
    // A head split across reads (TCP segments) is waited for a little, then left to node:http.
    if (head === HEAD_INCOMPLETE) {
      const waitMs = this.headWait.incomplete();
      if (waitMs !== undefined) return void this.socket.setTimeout(waitMs);
    }
    if (head === HEAD_INCOMPLETE || head === HEAD_DECLINED) return this.handOver();
    if (this.headWait.whole()) this.socket.setTimeout(this.options.idleTimeoutMs);
    const exchange = this.options.decide(head, this.socket);
    if (exchange === undefined) return this.handOver();
    const upstream = this.options.sockets.lend(exchange.origin, this);
    // Every connection to the address is busy: the full path's pool queues the request.
    if (upstream === undefined) {
      exchange.abandon(false);
      return this.handOver();
    }
    this.exchange = exchange;
    this.upstream = upstream;
    this.head = head;
    if (upstream.connected) return this.send();
    // Nothing is read or sent until the instance accepts: a refusal can still go the full path.
    // The bytes past the head wait in the socket, read again once it is sent (see keep()).
    this.connecting = true;
    this.pending = buf.subarray(0, head.bodyStart);
    this.keep(buf.subarray(head.bodyStart));
    upstream.socket.once('connect', () => {
      if (this.upstream !== upstream || !this.connecting) return;
      this.connecting = false;
      this.socket.resume();
      this.send();
    });
  }

  /** The instance connection is ready: the exchange starts, its head and body go out. */
  private send(): void {
    const exchange = this.exchange as SpliceExchange;
    const head = this.head as RawRequestHead;
    const upstream = this.upstream as UpstreamSocket;
    exchange.start();
    const buf = this.pending as Buffer;
    this.pending = undefined;
    this.keepAlive = !head.close;
    this.responseHead = undefined;
    this.responseStarted = false;
    this.responseClose = false;
    this.requestDone = false;
    this.resent = false;
    upstream.socket.setTimeout(this.options.upstreamHeadersTimeoutMs);
    upstream.socket.write(exchange.upstreamHead, 'latin1');
    this.requestBody.reset({ length: head.contentLength, chunked: head.chunked, untilClose: false });
    if (!head.chunked && head.contentLength === 0) this.requestSent(buf.subarray(head.bodyStart));
    else this.forwardRequestBody(buf, head.bodyStart);
  }

  private forwardRequestBody(chunk: Buffer, start: number): void {
    const upstream = this.upstream;
    if (upstream === undefined) return;
    const end = this.requestBody.scan(chunk, start);
    if (end === FRAMING_BROKEN) return this.cut();
    // A body with a Content-Length was counted from the header when the exchange started.
    const payload = this.requestBody.takePayloadBytes();
    if (this.head?.chunked && this.exchange?.counts) this.exchange.counts.bytesIn += payload;
    if (!writeKept(upstream.socket, this.requestBody, chunk, start, end < 0 ? chunk.length : end)) {
      this.socket.pause();
      upstream.socket.once('drain', () => this.socket.resume());
    }
    if (end < 0) return;
    // A close among the trailers: llhttp would read nothing more on the connection.
    if (this.requestBody.closeRequested) this.keepAlive = false;
    this.requestSent(chunk.subarray(end));
  }

  /**
   * The whole request went to the instance: the client owes nothing until the response ends. Its idle
   * timer runs on, ignored till then (onClientSilent), restarted by each write: not off and on again.
   */
  private requestSent(rest: Buffer): void {
    this.requestDone = true;
    if (rest.length > 0) this.keep(rest);
  }

  onUpstreamData(chunk: Buffer): void {
    if (this.exchange === undefined || this.connecting) return;
    if (this.responseStarted) return this.forwardResponseBody(chunk, 0);
    const buf = this.responseHead === undefined ? chunk : Buffer.concat([this.responseHead, chunk]);
    const head = readResponseHead(buf, this.exchange.responseLineNames);
    if (head === RESPONSE_INCOMPLETE) {
      this.responseHead = buf;
      return;
    }
    this.responseHead = undefined;
    if (head === RESPONSE_BROKEN) return this.fail('broken', undefined);
    // 1xx: dropped, as the full path drops them; the final head follows.
    if (head.status < 200) return this.onUpstreamData(buf.subarray(head.bodyStart));
    this.responseStarted = true;
    // The headers timeout runs on, ignored now (onUpstreamTimeout), until release() replaces it.
    const noBody = hasNoBody((this.head as RawRequestHead).method, head.status);
    const untilClose = !noBody && !head.chunked && head.contentLength < 0;
    this.responseBody.reset({
      length: noBody ? 0 : Math.max(head.contentLength, 0),
      chunked: !noBody && head.chunked,
      untilClose,
    });
    this.responseClose = head.close;
    if (untilClose || !this.requestDone) this.keepAlive = false;
    this.forwardResponseBody(buf, head.bodyStart, {
      response: head,
      edits: this.exchange.responseEdits(buf, head),
      chunked: !noBody && head.chunked,
      close: !this.keepAlive,
    });
  }

  /** `head`: the client's response head, which leaves with the body bytes of the same read. */
  private forwardResponseBody(chunk: Buffer, start: number, head?: ClientHead): void {
    const end = this.responseBody.scan(chunk, start);
    if (end === FRAMING_BROKEN) return this.cut();
    const payload = this.responseBody.takePayloadBytes();
    if (this.exchange?.counts) this.exchange.counts.bytesOut += payload;
    const last = end < 0 ? chunk.length : end;
    if (!writeResponseBytes(this.socket, this.responseBody, chunk, start, last, head)) {
      const upstream = this.upstream?.socket;
      upstream?.pause();
      this.socket.once('drain', () => upstream?.resume());
    }
    if (end < 0) return;
    // Bytes past the response's end: the instance is out of step, its connection is not reused; nor
    // after a close among its trailers.
    if (end < chunk.length || this.responseBody.closeRequested) this.responseClose = true;
    this.responseEnded();
  }

  private responseEnded(): void {
    const upstream = this.upstream;
    const exchange = this.exchange;
    this.upstream = undefined;
    this.exchange = undefined;
    if (upstream !== undefined) {
      upstream.socket.resume();
      if (this.requestDone && !this.responseClose) upstream.release();
      else upstream.discard();
    }
    exchange?.end();
    // Pipelined bytes wait in the socket (keep()), so a FIN read already has nothing behind it.
    if (!this.keepAlive || this.clientEnded) return this.finish();
    this.socket.resume();
  }

  onUpstreamClosed(err: Error | undefined): void {
    const exchange = this.exchange;
    this.upstream = undefined;
    if (exchange === undefined) return;
    if (this.connecting) {
      // Refused, or closed before accepting: nothing of the request reached the instance.
      this.connecting = false;
      this.exchange = undefined;
      exchange.abandon((err as NodeJS.ErrnoException | undefined)?.code === 'ECONNREFUSED');
      return this.handOver();
    }
    if (this.responseStarted) {
      // A body framed by the close ends here; any other was cut short, and so is the client's.
      if (this.responseBody.endsAtClose) return this.responseEnded();
      this.exchange = undefined;
      exchange.end();
      return this.cut();
    }
    const head = this.head as RawRequestHead;
    const hasBody = head.chunked || head.contentLength > 0;
    if (!this.resent && this.requestDone && mayResend(head.method, hasBody)) return this.resend(err);
    this.fail('broken', err);
  }

  /**
   * Closed or reset under a request with no body and nothing of its response sent to the client:
   * it goes once more, on a new connection (an idle one may hold the same unread close; see
   * upstream-resend.ts for which requests and why). The exchange has started: it is not counted again.
   */
  private resend(err: Error | undefined): void {
    const exchange = this.exchange as SpliceExchange;
    this.resent = true;
    this.responseHead = undefined;
    const upstream = this.options.sockets.lend(exchange.origin, this, true);
    if (upstream === undefined) return this.fail('broken', err);
    this.upstream = upstream;
    // The write waits in the socket until it connects; lend() set the connect timeout till then.
    upstream.socket.once('connect', () => {
      if (this.upstream === upstream) upstream.socket.setTimeout(this.options.upstreamHeadersTimeoutMs);
    });
    upstream.socket.write(exchange.upstreamHead, 'latin1');
  }

  onUpstreamTimeout(): void {
    if (!this.responseStarted) this.fail('timeout', undefined);
  }

  /** After start, before the response head: the exchange's error answer; the connection then ends. */
  private fail(failure: SpliceFailure, cause: Error | undefined): void {
    const exchange = this.exchange;
    if (exchange === undefined || this.connecting) return;
    this.exchange = undefined;
    this.upstream?.discard();
    this.upstream = undefined;
    const answer = exchange.failed(failure, cause);
    exchange.end();
    const { retryAfterSeconds } = this.options;
    this.finish(failedExchangeResponse(answer, { method: this.head?.method, retryAfterSeconds }));
  }

  private onClientSilent(): void {
    if (this.exchange === undefined)
      return this.pending === undefined ? void this.socket.destroy() : this.handOver();
    if (!this.requestDone && !this.responseStarted) return this.fail('client-silent', undefined);
    if (!this.requestDone) this.cut();
  }

  /** The client sent its FIN: what it sent before is still answered, then the connection ends. */
  private onClientEnd(): void {
    this.clientEnded = true;
    // Pending without an exchange is a head not whole yet: it will not be. node:http's parser ends
    // such a head in HPE_INVALID_EOF_STATE and the gateway answers 400 there (client-error.ts); the
    // same here, so both paths agree (nginx would close without an answer). Empty lines before a
    // request line are no head at all: llhttp skips them (RFC 9112 section 2.2), so they end quietly.
    if (this.exchange !== undefined) return;
    const cut = this.pending !== undefined && !onlyLineBreaks(this.pending);
    this.finish(cut ? clientErrorResponse('HPE_INVALID_EOF_STATE') : undefined);
  }

  private finish(last?: string): void {
    this.finished = true;
    this.pending = undefined;
    // The server allows half-open connections (the handover needs them), so ending our side alone
    // would leave the connection to a client that never closes its own: as node:http's
    // destroySoon, it is destroyed once the last bytes are written.
    this.socket.end(last ?? '', 'latin1', () => this.socket.destroy());
  }

  private onClientClose(): void {
    const exchange = this.exchange;
    const started = !this.connecting;
    this.exchange = undefined;
    this.connecting = false;
    this.upstream?.discard();
    this.upstream = undefined;
    if (started) exchange?.end();
    else exchange?.abandon(false);
  }

  /** Framing that cannot be read on, or a response cut short: neither connection can go on. */
  private cut(): void {
    const exchange = this.exchange;
    this.exchange = undefined;
    this.upstream?.discard();
    this.upstream = undefined;
    exchange?.end();
    this.socket.destroy();
  }

  /** Gives the connection to node:http, the bytes read and not forwarded put back to be read first. */
  private handOver(): void {
    const { socket } = this;
    // After the client's FIN nothing can be put back to read (keep() holds the FIN back behind a
    // pipelined head; a head that arrives whole with its FIN and is not taken has no answer).
    if (this.clientEnded) return this.finish();
    const bytes = this.pending;
    this.pending = undefined;
    socket.off('data', this.onData);
    socket.off('end', this.onEnd);
    socket.off('close', this.onClose);
    socket.off('timeout', this.onTimeout);
    socket.off('error', this.onError);
    socket.setTimeout(0);
    socket.pause();
    if (bytes !== undefined) socket.unshift(bytes);
    this.options.handOver(socket);
    // The server added its own listeners; reading resumes on the next tick, as in net.Server.
    process.nextTick(() => socket.resume());
  }
}

function onlyLineBreaks(bytes: Buffer): boolean {
  for (const byte of bytes) if (byte !== CR && byte !== LF) return false;
  return true;
}
