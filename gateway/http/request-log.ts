import type http from 'node:http';
import type { Logger } from 'winston';

/**
 * One JSON line per request when the log level is debug. At info a line per request would cost
 * more than forwarding it; errors the gateway answers itself are logged where they arise.
 */
export function logRequestWhenDebug(
  logger: Logger,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): void {
  if (!logger.isDebugEnabled()) return;
  const startedAt = process.hrtime.bigint();
  // Read now: by 'close' a finished request's socket may be detached (req.socket is then null).
  const remoteAddress = req.socket.remoteAddress;
  res.once('close', () => {
    logger.debug('request', {
      method: req.method,
      // The path only: a query may carry tokens, and userinfo never reaches the server anyway.
      path: (req.url ?? '').split('?', 1)[0],
      status: res.statusCode,
      completed: res.writableFinished,
      durationMs: Number(process.hrtime.bigint() - startedAt) / 1e6,
      remoteAddress,
    });
  });
}
