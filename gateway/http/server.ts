import fs from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { Logger } from 'winston';
import { listen } from '../../operator/observability/listen.js';

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
  tls: { certFile: string; keyFile: string } | undefined;
  logger: Logger;
}

/** Node's default cuts a request whose body is still arriving after 5 minutes: too short for big attachments. */
const NO_REQUEST_TIMEOUT = 0;
const IDLE_SWEEP_INTERVAL_MS = 50;

export async function startServer(options: StartServerOptions): Promise<ListeningServer> {
  const serverOptions: http.ServerOptions = { requestTimeout: NO_REQUEST_TIMEOUT, keepAliveTimeout: 65_000 };
  const server = options.tls
    ? https.createServer(
        {
          ...serverOptions,
          cert: await fs.readFile(options.tls.certFile),
          key: await fs.readFile(options.tls.keyFile),
        },
        options.listener,
      )
    : http.createServer(serverOptions, options.listener);
  const port = await listen(server, options);
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
