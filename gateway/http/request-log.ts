import type http from 'node:http';
import type { Logger } from 'winston';
import { isQueuePath } from '../queue-url/queue-path.js';
import { redactQueueRequestUrl } from '../queue-url/redact-destination.js';

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
      path: loggablePath(req.url ?? ''),
      status: res.statusCode,
      completed: res.writableFinished,
      durationMs: Number(process.hrtime.bigint() - startedAt) / 1e6,
      remoteAddress,
    });
  });
}

/**
 * The path only: a query may carry tokens. A queue publish's path embeds its destination URL,
 * whose userinfo, path and query may hold the receiver's credentials; only its origin is kept.
 */
function loggablePath(url: string): string {
  return isQueuePath(url) ? redactQueueRequestUrl(url) : url.split('?', 1)[0]!;
}
