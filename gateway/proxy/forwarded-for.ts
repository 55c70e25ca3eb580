import type http from 'node:http';
import type net from 'node:net';
import type tls from 'node:tls';
import type { TrustedProxies } from '../http/trusted-proxies.js';

/** How a client reached the gateway: what the instance is told in X-Forwarded-*, and the public origin. */
export interface ForwardedFor {
  /** The client's address as the gateway's socket saw it. */
  remoteAddress: string | undefined;
  /** `http` or `https`: how the client reached the gateway, or the trusted proxy in front of it. */
  proto: string;
  /** The host the client asked for. */
  host: string | undefined;
  /** The peer is a trusted proxy: the X-Forwarded-For chain it sent is kept, not discarded. */
  fromTrustedProxy: boolean;
}

/**
 * What the gateway saw of a request's client. From an untrusted peer only the socket and the Host
 * header count. From a trusted proxy (the Ingress controller that terminated TLS) its
 * X-Forwarded-Proto and X-Forwarded-Host win: without them every Location would be rewritten to
 * http:// although the client used https.
 */
export function deriveForwardedFor(req: http.IncomingMessage, trustedProxies: TrustedProxies): ForwardedFor {
  const { headers } = req;
  return forwardedFrom(
    req.socket,
    { host: headers.host, proto: headers['x-forwarded-proto'], forwardedHost: headers['x-forwarded-host'] },
    trustedProxies,
  );
}

/**
 * deriveForwardedFor's rule on a socket and the three headers it reads: the fast path
 * (fast-path.ts) has them from the raw request head, with no IncomingMessage.
 */
export function forwardedFrom(
  socket: net.Socket,
  headers: {
    host: string | undefined;
    proto: string | string[] | undefined;
    forwardedHost: string | string[] | undefined;
  },
  trustedProxies: TrustedProxies,
): ForwardedFor {
  const ownProto = (socket as tls.TLSSocket).encrypted ? 'https' : 'http';
  if (!trustedProxies.trustsPeer(socket)) {
    return {
      remoteAddress: socket.remoteAddress,
      proto: ownProto,
      host: headers.host,
      fromTrustedProxy: false,
    };
  }
  return {
    remoteAddress: socket.remoteAddress,
    proto: forwardedProto(headers.proto) ?? ownProto,
    host: firstValue(headers.forwardedHost) ?? headers.host,
    fromTrustedProxy: true,
  };
}

/** `http` or `https` from the first hop's X-Forwarded-Proto; anything else is not believed. */
function forwardedProto(header: string | string[] | undefined): string | undefined {
  const proto = firstValue(header)?.toLowerCase();
  return proto === 'https' || proto === 'http' ? proto : undefined;
}

/** The first of a comma-separated list (the hop nearest the client), or undefined when empty. */
function firstValue(header: string | string[] | undefined): string | undefined {
  const text = Array.isArray(header) ? header[0] : header;
  if (text === undefined) return undefined;
  const comma = text.indexOf(',');
  const first = (comma === -1 ? text : text.slice(0, comma)).trim();
  return first === '' ? undefined : first;
}
