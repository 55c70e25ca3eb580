import type http from 'node:http';
import type net from 'node:net';
import type { Logger } from 'winston';
import { ClientBodyTimeoutError } from './errors.js';
import { sendErrorResponse } from './error-response.js';

/** The latest request's response on a connection: when it is finished, every earlier one is. */
const LATEST_RESPONSE = Symbol('settee.latestResponse');
type TrackedSocket = net.Socket & { [LATEST_RESPONSE]?: http.ServerResponse };

/**
 * What the gateway does when a client connection has been silent (nothing read, nothing written)
 * for the client idle timeout: the server's 'timeout' listener, with server.timeout set to that
 * timeout. Node arms the socket's inactivity timer from the moment it connects, so this covers
 * what headersTimeout cannot: Node starts that clock only at a request's first byte, and a
 * connection that never sends one would stay open for ever.
 *
 * Silence is only the client's fault while the gateway waits on it:
 * - no request yet, or every response finished (between keep-alive requests): the connection is
 *   closed;
 * - a request whose body stopped arriving: a 408 when nothing has been answered yet, else the
 *   connection is cut; either way the connection closes, which aborts the upstream request the
 *   body was streaming into;
 * - a whole request read and its response not finished (an instance starting, a longpoll, a quiet
 *   continuous _changes, a client that reads slowly): the client owes nothing, the connection is
 *   left alone. TCP keepalive finds a client that vanished.
 */
export class ClientSilenceGuard {
  constructor(private readonly options: { idleTimeoutMs: number; logger: Logger }) {}

  /** Wraps the server's request listener, to know what is in flight on a connection when it goes quiet. */
  track(listener: http.RequestListener): http.RequestListener {
    return (req, res) => {
      // A property on the socket rather than a WeakMap entry: this runs for every request, and a
      // WeakMap write costs far more than a store into an object whose shape V8 already knows.
      (req.socket as TrackedSocket)[LATEST_RESPONSE] = res;
      listener(req, res);
    };
  }

  /** The server's 'timeout' listener: with one, Node leaves it to us to end the connection. */
  readonly onTimeout = (socket: net.Socket): void => {
    const res = (socket as TrackedSocket)[LATEST_RESPONSE];
    if (res === undefined || res.writableFinished) {
      socket.destroy();
      return;
    }
    const { req } = res;
    if (req.complete) return;
    this.options.logger.debug('request body stalled; closing the connection', {
      method: req.method,
      url: req.url?.slice(0, 200),
      responseStarted: res.headersSent,
    });
    if (res.headersSent) {
      socket.destroy();
      return;
    }
    res.shouldKeepAlive = false;
    sendErrorResponse(req, res, new ClientBodyTimeoutError(this.options.idleTimeoutMs), {
      retryAfterSeconds: 0,
    });
  };
}
