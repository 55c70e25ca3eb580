import type http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import type { CertificatePair } from './certificate-reloader.js';
import { SpliceConnection } from './splice-connection.js';
import type { SpliceOptions } from './splice-exchange.js';

/** The listening half of the hybrid: connections start on the splice and may move to node:http. */
export interface SpliceServer {
  /** What listens: a `net` server, or a `tls` one whose sockets are spliced after the handshake. */
  readonly server: net.Server;
  /** Ends the spliced connections with no exchange in flight (a shutdown's sweep). */
  closeIdle(): void;
  /** Ends every spliced connection (the shutdown grace is over). */
  closeAll(): void;
}

export interface SpliceServerOptions {
  /** Where connections are handed: the gateway's node:http server, which never listens itself. */
  fullPath: http.Server;
  /** TLS when set, as the https server would serve it. */
  certificate: CertificatePair | undefined;
  /** TCP keepalive on client connections, as the node:http server sets it (server.ts says why). */
  keepAliveInitialDelayMs: number;
  splice: Omit<SpliceOptions, 'handOver'>;
}

/** As https.Server answers ALPN: a client offering h2 and http/1.1 is told http/1.1. */
const HTTP_1_1 = ['http/1.1'];

/**
 * The gateway's listener with the fast path on (SETTEE_GATEWAY_FAST_PATH, docs/data-path.md
 * Option A): each connection is read by a SpliceConnection, which hands it to the node:http server
 * (unshift, then `emit('connection')`) at the first head it does not take. Half-open connections
 * are allowed, as node:http allows them: a client's FIN after its request must not cut the
 * response.
 */
export function createSpliceServer(options: SpliceServerOptions): SpliceServer {
  const { fullPath } = options;
  const spliced = new Map<net.Socket, SpliceConnection>();
  const splice: SpliceOptions = {
    ...options.splice,
    handOver: (socket) => {
      spliced.delete(socket);
      fullPath.emit('connection', socket);
    },
  };
  const accept = (socket: net.Socket): void => {
    spliced.set(socket, new SpliceConnection(socket, splice));
    socket.once('close', () => spliced.delete(socket));
  };
  const serverOptions: net.ServerOpts = {
    allowHalfOpen: true,
    noDelay: true,
    keepAlive: true,
    keepAliveInitialDelay: options.keepAliveInitialDelayMs,
  };
  const server = options.certificate
    ? tls.createServer({ ...serverOptions, ...options.certificate, ALPNProtocols: HTTP_1_1 }, accept)
    : net.createServer(serverOptions, accept);
  // node:http starts tracking connections (its headersTimeout sweep, closeIdleConnections) when it
  // emits 'listening'; this one never listens, the splice server hands it connections.
  fullPath.emit('listening');
  return {
    server,
    closeIdle: () => {
      for (const connection of spliced.values()) if (connection.idle) connection.socket.destroy();
    },
    closeAll: () => {
      for (const socket of spliced.keys()) socket.destroy();
    },
  };
}
