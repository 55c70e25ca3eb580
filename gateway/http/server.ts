import http from 'node:http';
import https from 'node:https';
import type tls from 'node:tls';
import type { Logger } from 'winston';
import { listen } from '../../observability/listen.js';
import { readCertificatePair, watchCertificate, type CertificateFiles } from './certificate-reloader.js';
import { ClientSilenceGuard } from './client-silence.js';
import { answerClientError } from './client-error.js';
import { refuseConnect } from './refuse-connect.js';
import type { SpliceOptions } from './splice-exchange.js';
import { createSpliceServer, type SpliceServer } from './splice-server.js';

export interface ListeningServer {
  readonly port: number;
  /** `http(s)://<host>:<port>` */
  readonly url: string;
  /**
   * Stops accepting connections, lets requests in flight finish for up to `graceMs` (a
   * continuous _changes feed never finishes on its own), then cuts whatever is left.
   */
  close(graceMs: number): Promise<void>;
}

/** How long clients may keep the gateway waiting, and how many may connect: see GatewayConfig.clients. */
export interface ClientConnectionLimits {
  /** A request head must be complete this long after its first byte, else 408 and close. */
  readonly headersTimeoutMs: number;
  /** A connection silent this long while the gateway waits on it is closed: see client-silence.ts. */
  readonly idleTimeoutMs: number;
  /** Connections beyond this are dropped on accept; undefined = no limit. */
  readonly maxConnections: number | undefined;
  /** A request head larger than this is answered 431: see client-error.ts. */
  readonly maxHeaderBytes: number;
}

export interface StartServerOptions {
  listener: http.RequestListener;
  host: string;
  port: number;
  /** Served over HTTPS when set; a renewed pair is picked up from the files without a restart. */
  tls: CertificateFiles | undefined;
  clients: ClientConnectionLimits;
  /**
   * SETTEE_GATEWAY_FAST_PATH: the splice's decision and instance connections; a `net` (or `tls`)
   * server then listens in front of the node:http one (splice-server.ts). Undefined: node:http alone.
   */
  fastPath?:
    Pick<SpliceOptions, 'decide' | 'sockets' | 'upstreamHeadersTimeoutMs' | 'retryAfterSeconds'> | undefined;
  logger: Logger;
}

/**
 * Node's requestTimeout bounds the time to receive a whole request: set, it would cut a big
 * attachment upload that is still arriving, however steadily. A stalled body is found by the idle
 * timeout instead (client-silence.ts).
 */
const NO_REQUEST_TIMEOUT = 0;
/** Node's own sweep interval for headersTimeout; a shorter timeout is swept four times as often. */
const MAX_CONNECTIONS_CHECKING_INTERVAL_MS = 30_000;
const IDLE_SWEEP_INTERVAL_MS = 50;
/**
 * TCP keepalive on client connections, after this much silence. A client that vanished (a laptop
 * closed, a NAT entry dropped) while holding a quiet continuous _changes feed never gets a write
 * that fails: only the kernel's probes find it gone, and the connection closing ends the upstream
 * request and its activity, so the instance can hibernate.
 */
const TCP_KEEPALIVE_INITIAL_DELAY_MS = 60_000;

export async function startServer(options: StartServerOptions): Promise<ListeningServer> {
  const { clients } = options;
  const serverOptions: http.ServerOptions = {
    requestTimeout: NO_REQUEST_TIMEOUT,
    // Given explicitly: left unset, Node takes min(60 s, requestTimeout), which is 0 (off) here.
    headersTimeout: clients.headersTimeoutMs,
    // Node checks headersTimeout only on a periodic sweep; this keeps a cut at most a quarter late.
    connectionsCheckingInterval: Math.min(
      MAX_CONNECTIONS_CHECKING_INTERVAL_MS,
      Math.max(1, Math.ceil(clients.headersTimeoutMs / 4)),
    ),
    keepAliveTimeout: clients.idleTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelay: TCP_KEEPALIVE_INITIAL_DELAY_MS,
    maxHeaderSize: clients.maxHeaderBytes,
  };
  const silence = new ClientSilenceGuard({ idleTimeoutMs: clients.idleTimeoutMs, logger: options.logger });
  const listener = silence.track(options.listener);
  const certificate = options.tls && (await readCertificatePair(options.tls));
  // With the fast path the splice server holds TLS, and hands node:http decrypted sockets.
  const server =
    certificate && !options.fastPath
      ? https.createServer({ ...serverOptions, ...certificate }, listener)
      : http.createServer(serverOptions, listener);
  const front: SpliceServer | undefined =
    options.fastPath &&
    createSpliceServer({
      fullPath: server,
      certificate,
      keepAliveInitialDelayMs: TCP_KEEPALIVE_INITIAL_DELAY_MS,
      splice: {
        ...options.fastPath,
        maxHeadBytes: clients.maxHeaderBytes,
        idleTimeoutMs: clients.idleTimeoutMs,
      },
    });
  const listening = front?.server ?? server;
  server.setTimeout(clients.idleTimeoutMs, silence.onTimeout);
  // No cap unless configured: a full server refuses everyone alike, the good clients with the bad,
  // and the timeouts already bound how long a slow client holds a connection. The limits that can
  // tell clients apart (connections per source address) belong to the Ingress or load balancer in
  // front; a cap here is for a gateway exposed directly, set below its file-descriptor limit so
  // that upstream connections still find descriptors.
  if (clients.maxConnections !== undefined) listening.maxConnections = clients.maxConnections;
  server.on('connect', refuseConnect);
  server.on('clientError', answerClientError);
  const port = await listen(listening, options);
  const reloader =
    options.tls && certificate
      ? watchCertificate({
          files: options.tls,
          current: certificate,
          apply: (pair) => (listening as https.Server | tls.Server).setSecureContext(pair),
          logger: options.logger,
        })
      : undefined;
  const scheme = options.tls ? 'https' : 'http';
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const url = `${scheme}://${host}:${port}`;
  options.logger.info('gateway listening', { url, fastPath: front !== undefined });

  let closing: Promise<void> | undefined;
  return {
    port,
    url,
    close(graceMs) {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          options.logger.warn('shutdown grace period over; closing the connections still open');
          server.closeAllConnections();
          front?.closeAll();
        }, graceMs);
        // close() drops the connections idle at that moment only; a keep-alive connection whose
        // request finishes later would otherwise hold the shutdown until the grace period ends.
        const sweep = (): void => {
          server.closeIdleConnections();
          front?.closeIdle();
        };
        sweep();
        const sweeper = setInterval(sweep, IDLE_SWEEP_INTERVAL_MS);
        reloader?.close();
        // The listening server's close waits for every connection it accepted, handed over or not.
        listening.close(() => {
          clearTimeout(timer);
          clearInterval(sweeper);
          // The node:http server behind the splice never listened: this stops its connection sweep.
          if (front) server.close();
          resolve();
        });
      });
      return closing;
    },
  };
}
