import net from 'node:net';

/** Who is told of an upstream socket's bytes and of its end: the one exchange it is lent to. */
export interface UpstreamOwner {
  onUpstreamData(chunk: Buffer): void;
  /** The socket closed while lent; `err` is what broke it, undefined for a plain close by the instance. */
  onUpstreamClosed(err: Error | undefined): void;
  /** The socket was silent for the timeout its owner set on it (socket.setTimeout). */
  onUpstreamTimeout(): void;
}

export interface UpstreamSocketsOptions {
  /** Connections per instance address, lent and idle together (SETTEE_GATEWAY_UPSTREAM_CONNECTIONS). */
  maxConnectionsPerAddress: number;
  /** How long an idle connection is kept (SETTEE_GATEWAY_UPSTREAM_IDLE_TIMEOUT). */
  idleTimeoutMs: number;
  /** How long a new connection may take to be accepted; CONNECT_TIMEOUT_MS unless a test says. */
  connectTimeoutMs?: number;
}

/** undici's connect timeout, which the full path's Agent keeps: the two paths wait alike. */
export const CONNECT_TIMEOUT_MS = 10_000;

/** A new connection was not accepted in time (an instance whose listen backlog is full). */
export class UpstreamConnectTimeoutError extends Error {
  constructor(ms: number) {
    super(`the instance did not accept a connection in ${ms} ms`);
    this.name = 'UpstreamConnectTimeoutError';
  }
}

/** One instance address's connections. */
interface Address {
  readonly origin: string;
  readonly host: string;
  readonly port: number;
  /** Most recently given back last: the warmest connection is lent first, the coldest times out. */
  readonly idle: UpstreamSocket[];
  /** Lent and idle, connecting included. */
  open: number;
}

/**
 * One keep-alive connection to an instance, lent to one exchange at a time. Its listeners are
 * added once, when it connects, and forward to whichever exchange owns it now, so a lent socket
 * costs no listener per exchange.
 */
export class UpstreamSocket {
  /** The exchange it is lent to; undefined while idle and once given up. */
  owner: UpstreamOwner | undefined;
  private failure: Error | undefined;
  private closed = false;

  constructor(
    readonly socket: net.Socket,
    private readonly address: Address,
    private readonly pool: UpstreamSockets,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      if (this.owner !== undefined) this.owner.onUpstreamData(chunk);
      // Bytes nobody asked for (an idle connection): the next exchange would read them as its response.
      else socket.destroy();
    });
    socket.on('error', (err) => {
      this.failure = err;
    });
    socket.on('timeout', () => {
      // Still connecting: nothing was sent, and the owner hears of it as a connection that closed.
      if (socket.connecting) socket.destroy(new UpstreamConnectTimeoutError(pool.connectTimeoutMs));
      else if (this.owner !== undefined) this.owner.onUpstreamTimeout();
      else socket.destroy();
    });
    socket.on('close', () => this.onClose());
  }

  /** Idle and still open both ways: the instance has not sent its FIN (read, 'close' pending). */
  get usable(): boolean {
    return this.socket.writable && !this.socket.readableEnded;
  }

  /** Whether the connection was made: a refused one never sent a byte of the request. */
  get connected(): boolean {
    return !this.socket.connecting && !this.closed;
  }

  private onClose(): void {
    this.closed = true;
    this.address.open -= 1;
    const at = this.address.idle.indexOf(this);
    if (at >= 0) this.address.idle.splice(at, 1);
    const owner = this.owner;
    this.owner = undefined;
    owner?.onUpstreamClosed(this.failure);
    this.pool.onClosed(this.address);
  }

  /** The exchange ended with both messages whole: the connection may carry the next one. */
  release(): void {
    this.owner = undefined;
    if (this.closed || this.socket.destroyed) return;
    this.address.idle.push(this);
    this.socket.setTimeout(this.pool.idleTimeoutMs);
  }

  /**
   * The exchange broke off (the client went away, framing broke, a timeout): the connection is cut
   * and its owner is let go FIRST, so its 'close', which comes a tick later, is told to nobody. Told
   * to the owner, it would land in whatever exchange that owner has started since.
   */
  discard(): void {
    this.owner = undefined;
    this.socket.destroy();
  }

  /**
   * Lends the socket to `owner`, which replaces the pool's idle timeout with its own at once
   * (socket.setTimeout, before it yields): not cleared here, as that would cost a timer list's
   * removal and re-creation a request (bench/gateway-hybrid.ts) for a setting replaced right after.
   */
  lend(owner: UpstreamOwner): this {
    this.owner = owner;
    return this;
  }
}

/**
 * Keep-alive `net` sockets to instances, for the fast path's splice (docs/data-path.md, Option A),
 * as nginx's upstream `keepalive` pool: a socket is lent to one exchange and given back when both
 * messages ended whole, or discarded when they did not. At most maxConnectionsPerAddress per
 * address, lent and idle together, as the undici Agent of the full path keeps; past it `lend`
 * answers undefined and the caller takes the full path, whose pool queues requests.
 */
export class UpstreamSockets {
  private readonly addresses = new Map<string, Address>();
  private closing = false;

  constructor(private readonly options: UpstreamSocketsOptions) {}

  get idleTimeoutMs(): number {
    return this.options.idleTimeoutMs;
  }

  get connectTimeoutMs(): number {
    return this.options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
  }

  /**
   * A socket to `origin` (`http://<ip>:<port>`) lent to `owner`: an idle one, or a new connection;
   * only a new one when `fresh` (a request sent again after a close: see upstream-resend.ts).
   */
  lend(origin: string, owner: UpstreamOwner, fresh = false): UpstreamSocket | undefined {
    if (this.closing) return undefined;
    const address = this.addressOf(origin);
    for (let idle = fresh ? undefined : address.idle.pop(); idle !== undefined; idle = address.idle.pop()) {
      if (idle.usable) return idle.lend(owner);
      // The instance's FIN was read and its 'close' has not come yet: a request written now is lost.
      idle.socket.destroy();
    }
    if (address.open >= this.options.maxConnectionsPerAddress) return undefined;
    address.open += 1;
    const socket = net.connect({ host: address.host, port: address.port });
    const lent = new UpstreamSocket(socket, address, this).lend(owner);
    // The owner sets its own once connected.
    socket.setTimeout(this.connectTimeoutMs);
    return lent;
  }

  /** Connections to `origin`, lent and idle (for tests). */
  count(origin: string): { open: number; idle: number } {
    const address = this.addresses.get(origin);
    return { open: address?.open ?? 0, idle: address?.idle.length ?? 0 };
  }

  /** Cuts the idle connections and makes no new ones; lent ones end with their exchanges. */
  close(): void {
    this.closing = true;
    for (const address of this.addresses.values())
      for (const idle of address.idle.splice(0)) idle.socket.destroy();
  }

  /** Called by a socket once it closed: an address with no connections left is forgotten. */
  onClosed(address: Address): void {
    if (address.open === 0 && this.addresses.get(address.origin) === address)
      this.addresses.delete(address.origin);
  }

  private addressOf(origin: string): Address {
    let address = this.addresses.get(origin);
    if (address === undefined) {
      const url = new URL(origin);
      address = {
        origin,
        // URL keeps an IPv6 address in brackets, which net.connect does not take.
        host: url.hostname.replace(/^\[|\]$/g, ''),
        port: Number(url.port || 80),
        idle: [],
        open: 0,
      };
      this.addresses.set(origin, address);
    }
    return address;
  }
}
