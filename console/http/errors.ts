import type { ErrorRequestHandler, Response } from 'express';
import type winston from 'winston';
import type { KubeApiError } from '../../kube/errors.js';
import { toKubeApiError } from '../../kube/errors.js';
import { errorMessage } from '../../observability/logger.js';
import type { SessionEndReason } from '../session/session-sealer.js';

/** The JSON body of every error answer: `error` is a stable code the page branches on. */
export interface ErrorBody {
  error: string;
  message: string;
  /** Per-field messages, keyed by the path the API server named (spec.hibernation.idleAfter). */
  fields?: Record<string, string>;
  reason?: string;
}

/** No session, or one that ended: the page goes to sign-in and shows `reason`. */
export class NotSignedInError extends Error {
  readonly code = 'NOT_SIGNED_IN';
  constructor(readonly reason: SessionEndReason | 'signed-out' | 'token-rejected') {
    super(
      {
        expired: 'Your session has expired. Sign in again.',
        invalid: 'Your session could not be read. Sign in again.',
        'signed-out': 'Sign in with a Kubernetes token.',
        'token-rejected':
          'The Kubernetes API server no longer accepts your token (it expired or was revoked). Sign in again.',
      }[reason],
    );
    this.name = 'NotSignedInError';
  }
}

/** A sign-in attempt the API server refused (TokenReview said no), with its reason. */
export class SignInRefusedError extends Error {
  readonly code = 'SIGN_IN_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'SignInRefusedError';
  }
}

/** A state-changing request without the session's CSRF token or from another origin. */
export class CsrfError extends Error {
  readonly code = 'CSRF';
  constructor() {
    super(
      'This request did not come from the console page (missing or wrong CSRF token, or another origin).',
    );
    this.name = 'CsrfError';
  }
}

/** Input the console refuses before asking the API server. */
export class BadInputError extends Error {
  readonly code = 'BAD_INPUT';
  constructor(
    message: string,
    readonly fields: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'BadInputError';
  }
}

export class TooManyStreamsError extends Error {
  readonly code = 'TOO_MANY_STREAMS';
  constructor(limit: number) {
    super(`This session already has ${limit} live views open; close another tab.`);
    this.name = 'TooManyStreamsError';
  }
}

/** The API server did not answer (refused, reset, timed out). Nothing was written. */
export class KubeUnreachableError extends Error {
  readonly code = 'KUBE_UNREACHABLE';
  constructor(options?: { cause?: unknown }) {
    super(
      'The Kubernetes API server cannot be reached right now; nothing was changed. Try again shortly.',
      options,
    );
    this.name = 'KubeUnreachableError';
  }
}

/** The console's own identity may not create TokenReviews: nobody can sign in until RBAC is fixed. */
export class ConsoleIdentityError extends Error {
  readonly code = 'CONSOLE_IDENTITY';
  constructor(options?: { cause?: unknown }) {
    super(
      "The console cannot check tokens: its own ServiceAccount may not create TokenReviews (the chart's console ClusterRole grants it). Ask the platform's operators.",
      options,
    );
    this.name = 'ConsoleIdentityError';
  }
}

/** The queue API cannot be used from the console: no gateway address configured, or no answer. */
export class QueueUnavailableError extends Error {
  readonly code = 'QUEUE_UNAVAILABLE';
  constructor(
    readonly reason: 'not-configured' | 'unreachable',
    options?: { cause?: unknown },
  ) {
    super(
      reason === 'not-configured'
        ? 'The console has no queue address configured (SETTEE_CONSOLE_QUEUE_BASE_URL), so it cannot show messages.'
        : 'The queue cannot be reached right now; nothing was changed. Try again shortly.',
      options,
    );
    this.name = 'QueueUnavailableError';
  }
}

/** The queue's own refusal (its QStash status and error message), passed on. */
export class QueueApiError extends Error {
  readonly code = 'QUEUE_API';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'QueueApiError';
  }
}

/** A namespace the user asked to open that their role shows them nothing in (SelfSubjectAccessReview). */
export class NamespaceNotReachableError extends Error {
  readonly code = 'NAMESPACE_NOT_REACHABLE';
  constructor(message: string) {
    super(message);
    this.name = 'NamespaceNotReachableError';
  }
}

/** An API server field path such as `spec.hibernation.idleAfter` from a 422's cause. */
function fieldMessages(err: KubeApiError): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const cause of err.causes) {
    if (!cause.field || !cause.message) continue;
    // CEL failures read `Invalid value: "object": keepAlive requires plan: paid`; the rule's own words follow.
    const message = cause.message.replace(/^Invalid value: "object": /, '');
    fields[cause.field] = fields[cause.field] ? `${fields[cause.field]}; ${message}` : message;
  }
  return fields;
}

/** Maps every error to its status and JSON body, in this one place. */
export function toErrorAnswer(err: unknown): { status: number; body: ErrorBody; endsSession: boolean } {
  if (err instanceof NotSignedInError)
    return {
      status: 401,
      body: { error: 'not-signed-in', reason: err.reason, message: err.message },
      endsSession: true,
    };
  if (err instanceof SignInRefusedError)
    return { status: 401, body: { error: 'sign-in-refused', message: err.message }, endsSession: true };
  if (err instanceof CsrfError)
    return { status: 403, body: { error: 'csrf', message: err.message }, endsSession: false };
  if (err instanceof BadInputError)
    return {
      status: 400,
      body: { error: 'bad-input', message: err.message, fields: err.fields },
      endsSession: false,
    };
  if (err instanceof NamespaceNotReachableError)
    return {
      status: 403,
      body: { error: 'forbidden', message: err.message, fields: { namespace: err.message } },
      endsSession: false,
    };
  if (err instanceof TooManyStreamsError)
    return { status: 429, body: { error: 'too-many-streams', message: err.message }, endsSession: false };
  if (err instanceof ConsoleIdentityError)
    return {
      status: 500,
      body: { error: 'console-misconfigured', message: err.message },
      endsSession: false,
    };
  if (err instanceof QueueUnavailableError)
    return {
      status: 503,
      body: { error: 'queue-unavailable', reason: err.reason, message: err.message },
      endsSession: false,
    };
  if (err instanceof QueueApiError) {
    const status = [400, 404, 409, 412, 429, 503].includes(err.status) ? err.status : 502;
    return {
      status,
      body: { error: 'queue-refused', message: `The queue answered ${err.status}: ${err.message}` },
      endsSession: false,
    };
  }
  if (err instanceof KubeUnreachableError)
    return { status: 503, body: { error: 'kube-unreachable', message: err.message }, endsSession: false };
  const kube = toKubeApiError(err);
  if (kube) {
    if (kube.statusCode === 401) return toErrorAnswer(new NotSignedInError('token-rejected'));
    const status = [400, 403, 404, 409, 422].includes(kube.statusCode) ? kube.statusCode : 502;
    const error =
      { 400: 'bad-input', 403: 'forbidden', 404: 'not-found', 409: 'conflict', 422: 'invalid' }[status] ??
      'kube-error';
    return {
      status,
      body: { error, message: kube.message, fields: fieldMessages(kube), reason: kube.reason },
      endsSession: false,
    };
  }
  return {
    status: 500,
    body: { error: 'internal', message: 'The console failed to answer; see its logs.' },
    endsSession: false,
  };
}

export function errorHandler(options: {
  logger: winston.Logger;
  clearSession: (res: Response) => void;
}): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    // express.json's own errors (bad JSON, too large) carry status and type.
    const parserStatus = (err as { status?: unknown; type?: unknown }).status;
    if (typeof parserStatus === 'number' && typeof (err as { type?: unknown }).type === 'string') {
      res
        .status(parserStatus)
        .json({ error: 'bad-input', message: `request body: ${errorMessage(err)}` } satisfies ErrorBody);
      return;
    }
    const answer = toErrorAnswer(err);
    if (answer.status >= 500)
      options.logger.error('request failed', {
        method: req.method,
        path: req.path,
        error: errorMessage(err),
      });
    if (answer.endsSession) options.clearSession(res);
    res.status(answer.status).json(answer.body);
  };
}
