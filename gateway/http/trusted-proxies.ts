import type http from 'node:http';
import type net from 'node:net';
import ipaddr from 'ipaddr.js';

type AddressRange = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * The proxies whose X-Forwarded-* headers the gateway believes (SETTEE_GATEWAY_TRUSTED_PROXIES),
 * as Express's "trust proxy" or nginx's set_real_ip_from: a TLS-terminating Ingress controller
 * reports that its client came over https, but any client could send the same header, so only a
 * TCP peer inside one of these ranges is heard. None by default.
 *
 * The answer belongs to the connection, and an Ingress controller keeps its upstream connections
 * alive: it is worked out once per socket and remembered, so a request on a known connection costs
 * one WeakMap lookup, and with no ranges configured not even that.
 */
export class TrustedProxies {
  private readonly decided = new WeakMap<net.Socket, boolean>();
  /** Each socket's peer in canonical spelling: parsing it cost the queue's publish ~4% of its CPU. */
  private readonly peers = new WeakMap<net.Socket, string>();

  private constructor(private readonly ranges: readonly AddressRange[]) {}

  /** `cidrs` as validated by the gateway's config (an invalid range throws). */
  static parse(cidrs: readonly string[]): TrustedProxies {
    return new TrustedProxies(cidrs.map((cidr) => ipaddr.parseCIDR(cidr)));
  }

  /** Whether the peer of `socket` is a trusted proxy. */
  trustsPeer(socket: net.Socket): boolean {
    if (this.ranges.length === 0) return false;
    let trusted = this.decided.get(socket);
    if (trusted === undefined) {
      trusted = this.trustsAddress(socket.remoteAddress);
      this.decided.set(socket, trusted);
    }
    return trusted;
  }

  /**
   * The address of the client that sent `req`, as QStash records a publisher's `callerIp`: the
   * first address of X-Forwarded-For (the client the first proxy saw) when the peer is a trusted
   * proxy, else the peer itself, so a client cannot name another address by sending the header.
   * IPv4-mapped IPv6 is written as IPv4; a first hop that is not an address falls back to the peer.
   */
  clientAddress(req: http.IncomingMessage): string | undefined {
    const peer = this.peerOf(req.socket);
    if (!this.trustsPeer(req.socket)) return peer;
    const header = req.headers['x-forwarded-for'];
    const chain = Array.isArray(header) ? header.join(',') : header;
    return canonical(chain?.split(',')[0]?.trim()) ?? peer;
  }

  /** The socket's peer address, canonical, worked out once per connection like `trustsPeer`. */
  private peerOf(socket: net.Socket): string | undefined {
    let peer = this.peers.get(socket);
    if (peer === undefined) {
      peer = canonical(socket.remoteAddress);
      // A closed socket reports no address: that is not remembered.
      if (peer !== undefined) this.peers.set(socket, peer);
    }
    return peer;
  }

  /** Whether `address` lies in one of the ranges; an IPv4-mapped IPv6 address is judged as IPv4. */
  trustsAddress(address: string | undefined): boolean {
    if (address === undefined || !ipaddr.isValid(address)) return false;
    const parsed = ipaddr.process(address);
    return this.ranges.some(
      ([network, bits]) => network.kind() === parsed.kind() && parsed.match(network, bits),
    );
  }
}

/** `address` in ipaddr.js's canonical spelling (IPv4-mapped IPv6 as IPv4), or undefined when it is none. */
function canonical(address: string | undefined): string | undefined {
  return address !== undefined && ipaddr.isValid(address) ? ipaddr.process(address).toString() : undefined;
}
