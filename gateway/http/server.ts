import http from 'node:http';
import https from 'node:https';
import type { Logger } from 'winston';
import { listen } from '../../operator/observability/listen.js';
import { readCertificatePair, watchCertificate, type CertificateFiles } from './certificate-reloader.js';

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

export interface StartServerOptions {
  listener: http.RequestListener;
  host: string;
  port: number;
  /** Served over HTTPS when set; a renewed pair is picked up from the files without a restart. */
  tls: CertificateFiles | undefined;
  logger: Logger;
}

/** Node's default cuts a request whose body is still arriving after 5 minutes: too short for big attachments. */
const NO_REQUEST_TIMEOUT = 0;
const IDLE_SWEEP_INTERVAL_MS = 50;
/**
 * TCP keepalive on client connections, after this much silence. A client that vanished (a laptop
 * closed, a NAT entry dropped) while holding a quiet continuous _changes feed never gets a write
 * that fails: only the kernel's probes find it gone, and the connection closing ends the upstream
 * request and its activity, so the instance can hibernate.
 */
const TCP_KEEPALIVE_INITIAL_DELAY_MS = 60_000;

export async function startServer(options: StartServerOptions): Promise<ListeningServer> {
  const serverOptions: http.ServerOptions = {
    requestTimeout: NO_REQUEST_TIMEOUT,
    keepAliveTimeout: 65_000,
    keepAlive: true,
    keepAliveInitialDelay: TCP_KEEPALIVE_INITIAL_DELAY_MS,
  };
  const certificate = options.tls && (await readCertificatePair(options.tls));
  const server = certificate
    ? https.createServer({ ...serverOptions, ...certificate }, options.listener)
    : http.createServer(serverOptions, options.listener);
  const port = await listen(server, options);
  const reloader =
    options.tls && certificate
      ? watchCertificate({
          files: options.tls,
          current: certificate,
          apply: (pair) => (server as https.Server).setSecureContext(pair),
          logger: options.logger,
        })
      : undefined;
  const scheme = options.tls ? 'https' : 'http';
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const url = `${scheme}://${host}:${port}`;
  options.logger.info('gateway listening', { url });

  let closing: Promise<void> | undefined;
  return {
    port,
    url,
    close(graceMs) {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          options.logger.warn('shutdown grace period over; closing the connections still open');
          server.closeAllConnections();
        }, graceMs);
        // close() drops the connections idle at that moment only; a keep-alive connection whose
        // request finishes later would otherwise hold the shutdown until the grace period ends.
        const sweeper = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_INTERVAL_MS);
        reloader?.close();
        server.close(() => {
          clearTimeout(timer);
          clearInterval(sweeper);
          resolve();
        });
      });
      return closing;
    },
  };
}
