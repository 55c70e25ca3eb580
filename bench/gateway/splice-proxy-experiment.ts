/**
 * EXPERIMENT, not product code (issue 26 item 1; docs/data-path.md says what it showed): can a
 * Node.js proxy that still sees every request beat the floor of node:http + undici
 * (bare-proxy.ts)? This one works on raw `net` sockets: it parses each request head itself (one
 * indexOf for its end, one pass over its lines), makes the per-request decisions the gateway makes
 * (route by `/db/<ns>/<name>`, a rate check, request and byte metering, the activity count of open
 * responses that idle detection reads), writes the rewritten head to a pooled keep-alive upstream
 * socket, and then splices bytes both ways, tracking only the framing (Content-Length, or chunk
 * sizes: the gateway's own raw-request-head.ts and body-framing.ts) so that it knows where each body ends: that is where the response's activity ends, the
 * connection goes back to the pool and the client's next request head is read. No IncomingMessage,
 * ServerResponse or undici objects per request, no header arrays on the response path unless a
 * header must be rewritten.
 *
 * The header rules are the gateway's own (forward-headers.ts, path-form-isolation.ts,
 * response-rewrite.ts), so the instance sees the same request and the client the same response
 * head. What it leaves out, as a prototype: TLS, timeouts, waking (a hibernated instance would go
 * to the gateway's normal path), a head the raw reader declines (answered 400 here; node:http
 * would read it in the product), the envelope's request classes and body reads
 * (_bulk_docs), error pages beyond a bare 502/404.
 *
 * Run as its own process: argv[2] is its port, then `<namespace>/<name>=<port>` routes.
 */
import net from 'node:net';
import { buildUpstreamHeaders, specialHeaderName } from '../../gateway/proxy/forward-headers.js';
import { isolatesResponse, PATH_FORM_ISOLATION_HEADERS } from '../../gateway/proxy/path-form-isolation.js';
import { rewriteLocation, rewriteSetCookie } from '../../gateway/proxy/response-rewrite.js';
import { BodyFraming, FRAMING_BROKEN } from '../../gateway/http/body-framing.js';
import { HEAD_DECLINED, HEAD_INCOMPLETE, readRawRequestHead } from '../../gateway/http/raw-request-head.js';

const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');
const MAX_HEAD_BYTES = 64 * 1024;
const ISOLATION = `${PATH_FORM_ISOLATION_HEADERS[0]}: ${PATH_FORM_ISOLATION_HEADERS[1]}\r\n${PATH_FORM_ISOLATION_HEADERS[2]}: ${PATH_FORM_ISOLATION_HEADERS[3]}\r\n`;

/** What the gateway keeps per instance on the request path: its address, meter, activity, rate window. */
interface Instance {
  port: number;
  origin: string;
  basePath: string;
  requests: number;
  bytesIn: number;
  bytesOut: number;
  /** Responses not yet ended: what the activity reporter renews the Lease for. */
  open: number;
  lastRequestAt: number;
  windowStart: number;
  windowCount: number;
  idle: Upstream[];
}

const RATE_PER_SECOND = 1_000_000;
const instances = new Map<string, Instance>();

/** One keep-alive connection to an instance, handed to one client exchange at a time. */
class Upstream {
  owner: ClientConnection | undefined;
  open = true;

  constructor(
    readonly socket: net.Socket,
    readonly instance: Instance,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.owner?.onUpstreamData(chunk));
    socket.on('close', () => this.closed());
    socket.on('error', () => this.closed());
  }

  private closed(): void {
    if (!this.open) return;
    this.open = false;
    const idle = this.instance.idle;
    const at = idle.indexOf(this);
    if (at >= 0) idle.splice(at, 1);
    this.owner?.onUpstreamClosed();
  }
}

function acquire(instance: Instance): Upstream {
  const idle = instance.idle.pop();
  if (idle) return idle;
  return new Upstream(net.connect(instance.port, '127.0.0.1'), instance);
}

/** One client connection: a request head is parsed and decided, then bytes are spliced until both bodies end. */
class ClientConnection {
  private pending: Buffer | undefined;
  private upstream: Upstream | undefined;
  private instance: Instance | undefined;
  private state: 'head' | 'request-body' | 'response' = 'head';
  private readonly requestBody = new BodyFraming();
  private readonly responseBody = new BodyFraming();
  private responseHeadSeen = false;
  private responseHead: Buffer | undefined;
  private isHead = false;
  private isolate = false;
  private keepAlive = true;
  private host: string | undefined;

  constructor(private readonly socket: net.Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onClientData(chunk));
    socket.on('error', () => this.socket.destroy());
    socket.on('close', () => this.onClientClosed());
  }

  private onClientData(chunk: Buffer): void {
    if (this.state === 'request-body') return this.forwardRequestBody(chunk, 0);
    this.pending = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    if (this.state === 'head') this.readHead();
  }

  private readHead(): void {
    const buf = this.pending;
    if (!buf) return;
    const head = readRawRequestHead(buf, MAX_HEAD_BYTES);
    if (head === HEAD_INCOMPLETE) return;
    if (head === HEAD_DECLINED) return this.fail(400, 'a request head this experiment does not take');
    this.pending = undefined;
    this.keepAlive = !head.close;
    this.host = head.host;
    this.decide(
      head.method,
      head.target,
      head.rawHeaders,
      head.contentLength,
      head.chunked,
      buf.subarray(head.bodyStart),
    );
  }

  /** The per-request decision the gateway makes: which instance, whether it may pass, what it counts. */
  private decide(
    method: string,
    target: string,
    rawHeaders: string[],
    contentLength: number,
    chunked: boolean,
    rest: Buffer,
  ): void {
    // /db/<namespace>/<name>/<path>
    const nsEnd = target.indexOf('/', 4);
    const nameEnd = nsEnd < 0 ? -1 : target.indexOf('/', nsEnd + 1);
    const instance = target.startsWith('/db/')
      ? instances.get(target.slice(4, nameEnd < 0 ? undefined : nameEnd))
      : undefined;
    if (!instance) return this.fail(404, 'no such instance');
    const now = Date.now();
    if (now - instance.windowStart >= 1000) {
      instance.windowStart = now;
      instance.windowCount = 0;
    }
    if (++instance.windowCount > RATE_PER_SECOND) return this.fail(429, 'rate');
    instance.requests += 1;
    instance.bytesIn += contentLength;
    instance.open += 1;
    instance.lastRequestAt = now;
    this.instance = instance;
    const upstreamPath = nameEnd < 0 ? '/' : target.slice(nameEnd);
    this.isolate = isolatesResponse(instance.basePath, upstreamPath);
    this.isHead = method === 'HEAD';
    const forwarded = {
      remoteAddress: this.socket.remoteAddress,
      proto: 'http',
      host: this.host,
      fromTrustedProxy: false,
    };
    const headers = buildUpstreamHeaders(rawHeaders, forwarded);
    let head = `${method} ${upstreamPath} HTTP/1.1\r\n`;
    for (let i = 0; i < headers.length; i += 2) head += `${headers[i]}: ${headers[i + 1]}\r\n`;
    if (chunked) head += 'Transfer-Encoding: chunked\r\n';
    head += '\r\n';
    const upstream = acquire(instance);
    upstream.owner = this;
    this.upstream = upstream;
    this.responseHeadSeen = false;
    this.requestBody.reset({ length: contentLength, chunked, untilClose: false });
    upstream.socket.write(head, 'latin1');
    if (!chunked && contentLength === 0) return this.requestSent(rest);
    this.state = 'request-body';
    this.forwardRequestBody(rest, 0);
  }

  private forwardRequestBody(chunk: Buffer, start: number): void {
    const end = this.requestBody.scan(chunk, start);
    const upstream = this.upstream?.socket;
    if (!upstream) return;
    if (end === FRAMING_BROKEN) return this.broken();
    if (end < 0) {
      if (!upstream.write(start === 0 ? chunk : chunk.subarray(start))) {
        this.socket.pause();
        upstream.once('drain', () => this.socket.resume());
      }
      return;
    }
    if (end > start) upstream.write(chunk.subarray(start, end));
    this.requestSent(chunk.subarray(end));
  }

  private requestSent(rest: Buffer): void {
    this.state = 'response';
    // A pipelined next request waits, unread, until this response has ended.
    if (rest.length > 0) this.pending = this.pending ? Buffer.concat([this.pending, rest]) : rest;
  }

  onUpstreamData(chunk: Buffer): void {
    let body = chunk;
    let start = 0;
    if (!this.responseHeadSeen) {
      const buf = this.responseHead ? Buffer.concat([this.responseHead, chunk]) : chunk;
      const end = buf.indexOf(HEAD_END);
      if (end < 0) {
        this.responseHead = buf;
        return;
      }
      this.responseHead = undefined;
      const head = this.clientHead(buf.toString('latin1', 0, end));
      if (head === undefined) {
        // 1xx: passed on as it came, the final head follows.
        this.socket.write(buf.subarray(0, end + 4));
        return this.onUpstreamData(buf.subarray(end + 4));
      }
      this.responseHeadSeen = true;
      body = buf;
      start = end + 4;
      const bodyEnd = this.responseBody.scan(body, start);
      if (bodyEnd === FRAMING_BROKEN) return this.broken();
      this.countOut(bodyEnd < 0 ? body.length - start : bodyEnd - start);
      const bodyPart = body.subarray(start, bodyEnd < 0 ? body.length : bodyEnd);
      this.write(bodyPart.length > 0 ? Buffer.concat([Buffer.from(head, 'latin1'), bodyPart]) : head);
      if (bodyEnd >= 0) this.responseEnded();
      return;
    }
    const bodyEnd = this.responseBody.scan(body, start);
    if (bodyEnd === FRAMING_BROKEN) return this.broken();
    this.countOut(bodyEnd < 0 ? body.length : bodyEnd);
    this.write(bodyEnd < 0 ? body : body.subarray(0, bodyEnd));
    if (bodyEnd >= 0) this.responseEnded();
  }

  /** The response head for the client, with the framing noted; undefined for an informational one. */
  private clientHead(head: string): string | undefined {
    const status = Number(head.slice(9, 12));
    if (status >= 100 && status < 200) return undefined;
    const instance = this.instance as Instance;
    let out = '';
    let contentLength = -1;
    let chunked = false;
    let lineStart = 0;
    for (;;) {
      const next = head.indexOf('\r\n', lineStart);
      const line = next < 0 ? head.slice(lineStart) : head.slice(lineStart, next);
      const colon = lineStart === 0 ? -1 : line.indexOf(':');
      let kept = line;
      if (colon > 0) {
        const special = specialHeaderName(line.slice(0, colon));
        if (special !== undefined) {
          const value = line.slice(colon + 1).trim();
          if (special === 'transfer-encoding') chunked = value.toLowerCase().includes('chunked');
          else if (special === 'location') {
            kept = `${line.slice(0, colon)}: ${rewriteLocation(value, {
              basePath: instance.basePath,
              publicOrigin: this.host === undefined ? undefined : `http://${this.host}`,
              upstreamOrigin: instance.origin,
            })}`;
          } else if (special === 'set-cookie') {
            kept = `${line.slice(0, colon)}: ${rewriteSetCookie(value, instance.basePath)}`;
          } else if (special === 'connection' || special === 'keep-alive') kept = '';
        } else if (colon === 14 && line.slice(0, colon).toLowerCase() === 'content-length') {
          contentLength = Number(line.slice(colon + 1));
        }
      }
      if (kept !== '') out += `${kept}\r\n`;
      if (next < 0) break;
      lineStart = next + 2;
    }
    if (this.isolate) out += ISOLATION;
    if (!this.keepAlive) out += 'Connection: close\r\n';
    const noBody = this.isHead || status === 204 || status === 304;
    this.responseBody.reset({
      length: noBody ? 0 : Math.max(contentLength, 0),
      chunked: !noBody && chunked,
      untilClose: !noBody && !chunked && contentLength < 0,
    });
    return `${out}\r\n`;
  }

  private countOut(bytes: number): void {
    if (this.instance) this.instance.bytesOut += bytes;
  }

  private write(data: Buffer | string): void {
    if (this.socket.write(data)) return;
    const upstream = this.upstream?.socket;
    upstream?.pause();
    this.socket.once('drain', () => upstream?.resume());
  }

  private responseEnded(): void {
    const upstream = this.upstream;
    if (this.instance) this.instance.open -= 1;
    this.instance = undefined;
    this.upstream = undefined;
    if (upstream) {
      upstream.owner = undefined;
      if (upstream.open) upstream.instance.idle.push(upstream);
    }
    this.state = 'head';
    if (!this.keepAlive) return void this.socket.end();
    if (this.pending) this.readHead();
  }

  onUpstreamClosed(): void {
    if (this.state === 'response' && this.responseBody.endsAtClose && this.responseHeadSeen) {
      if (this.instance) this.instance.open -= 1;
      this.instance = undefined;
      this.upstream = undefined;
      return void this.socket.end();
    }
    if (!this.responseHeadSeen) return this.fail(502, 'the instance closed the connection');
    this.socket.destroy();
  }

  private onClientClosed(): void {
    if (this.instance) this.instance.open -= 1;
    this.instance = undefined;
    // A response still streaming: its upstream connection is not reusable.
    this.upstream?.socket.destroy();
    this.upstream = undefined;
  }

  /** Framing that cannot be read on: neither connection knows where the next message starts. */
  private broken(): void {
    this.upstream?.socket.destroy();
    this.socket.destroy();
  }

  private fail(status: number, reason: string): void {
    const body = JSON.stringify({ error: String(status), reason });
    this.socket.end(
      `HTTP/1.1 ${status} Error\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
}

const [port, ...routes] = process.argv.slice(2);
for (const route of routes) {
  const [ref = '', upstreamPort = ''] = route.split('=');
  instances.set(ref, {
    port: Number(upstreamPort),
    origin: `http://127.0.0.1:${upstreamPort}`,
    basePath: `/db/${ref}`,
    requests: 0,
    bytesIn: 0,
    bytesOut: 0,
    open: 0,
    lastRequestAt: 0,
    windowStart: 0,
    windowCount: 0,
    idle: [],
  });
}
net
  .createServer({ noDelay: true }, (socket) => new ClientConnection(socket))
  .listen(Number(port), '127.0.0.1', () => process.stdout.write('listening\n'));
process.on('SIGTERM', () => process.exit(0));
