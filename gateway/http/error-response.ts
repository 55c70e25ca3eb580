import type http from 'node:http';
import { GatewayError, RateLimitedError, type GatewayErrorCode } from './errors.js';

/** CouchDB's own error shape, so CouchDB clients show gateway errors as they show CouchDB's. */
export interface CouchErrorBody {
  error: string;
  reason: string;
}

interface ErrorAnswer {
  status: number;
  error: string;
  /** 503s say when to come back (the instance is starting, not broken), 429s when the rate allows. */
  retry: boolean;
}

/** The one place a gateway error becomes an HTTP status. */
const ANSWERS: Record<GatewayErrorCode, ErrorAnswer> = {
  MALFORMED_HOST: { status: 400, error: 'bad_request', retry: false },
  MALFORMED_INSTANCE_PATH: { status: 400, error: 'bad_request', retry: false },
  // CouchDB's answer to credentials it cannot accept.
  MALFORMED_CREDENTIALS: { status: 401, error: 'unauthorized', retry: false },
  UNKNOWN_INSTANCE: { status: 404, error: 'not_found', retry: false },
  INSTANCE_DELETING: { status: 404, error: 'not_found', retry: false },
  UPSTREAM_FAILED: { status: 502, error: 'bad_gateway', retry: false },
  UPSTREAM_TIMEOUT: { status: 504, error: 'gateway_timeout', retry: false },
  WAKE_TIMEOUT: { status: 503, error: 'service_unavailable', retry: true },
  INSTANCE_UNSCHEDULABLE: { status: 503, error: 'service_unavailable', retry: true },
  HOLD_QUEUE_FULL: { status: 503, error: 'service_unavailable', retry: true },
  SHUTTING_DOWN: { status: 503, error: 'service_unavailable', retry: true },
  CLIENT_BODY_TIMEOUT: { status: 408, error: 'request_timeout', retry: false },
  METHOD_NOT_ALLOWED: { status: 405, error: 'method_not_allowed', retry: false },
  // Cloudant's answers to the same limits: 429 too_many_requests, 402 over_data_quota.
  RATE_LIMITED: { status: 429, error: 'too_many_requests', retry: true },
  INSTANCE_BUSY: { status: 429, error: 'too_many_requests', retry: true },
  STORAGE_LIMIT: { status: 402, error: 'over_data_quota', retry: false },
  DATABASE_LIMIT: { status: 403, error: 'forbidden', retry: false },
};

const UNEXPECTED: ErrorAnswer = { status: 500, error: 'internal_server_error', retry: false };

export interface ErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: CouchErrorBody;
}

export function buildErrorResponse(err: unknown, options: { retryAfterSeconds: number }): ErrorResponse {
  const known = err instanceof GatewayError;
  const answer = known ? ANSWERS[err.code] : UNEXPECTED;
  // An unexpected error's message may carry internals; the log has it, the client gets a generic reason.
  const body: CouchErrorBody = { error: answer.error, reason: known ? err.message : 'the gateway failed' };
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'Cache-Control': 'must-revalidate',
  };
  if (answer.retry) {
    const seconds = err instanceof RateLimitedError ? err.retryAfterSeconds : options.retryAfterSeconds;
    headers['Retry-After'] = String(seconds);
  }
  return { status: answer.status, headers, body };
}

/**
 * Answers with the error. When the upstream's status line is already out (it broke mid-stream)
 * there is no honest answer left: the connection is cut so the client sees a truncated response.
 */
export function sendErrorResponse(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  err: unknown,
  options: { retryAfterSeconds: number },
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const { status, headers, body } = buildErrorResponse(err, options);
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, { ...headers, 'Content-Length': Buffer.byteLength(text) });
  res.end(req.method === 'HEAD' ? undefined : text);
}
