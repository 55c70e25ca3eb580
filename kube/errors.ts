import { ApiException } from '@kubernetes/client-node';

export interface StatusCause {
  field?: string;
  message?: string;
}

/** `metav1.Status` as the API server returns it on failure; only the fields Settee reads. */
interface StatusBody {
  message?: string;
  reason?: string;
  details?: { causes?: StatusCause[] };
}

/**
 * A failed call to the Kubernetes API, whatever client made it. Converted in one place
 * (`toKubeApiError`) so callers branch on `statusCode`/`reason`, never on client-node's
 * exception shapes or message strings.
 */
export class KubeApiError extends Error {
  readonly code = 'KUBE_API_ERROR';
  /** HTTP status: 404, 409, 422, ... */
  readonly statusCode: number;
  /** The Status reason: NotFound, AlreadyExists, Conflict, Invalid, Forbidden, Gone, ... */
  readonly reason: string | undefined;
  readonly causes: readonly StatusCause[];

  constructor(options: {
    statusCode: number;
    reason?: string | undefined;
    message: string;
    causes?: StatusCause[] | undefined;
    cause?: unknown;
  }) {
    super(options.message, { cause: options.cause });
    this.name = 'KubeApiError';
    this.statusCode = options.statusCode;
    this.reason = options.reason;
    this.causes = options.causes ?? [];
  }

  get isConflict(): boolean {
    return this.statusCode === 409 && this.reason !== 'AlreadyExists';
  }

  get isAlreadyExists(): boolean {
    return this.statusCode === 409 && this.reason === 'AlreadyExists';
  }

  get isNotFound(): boolean {
    return this.statusCode === 404;
  }

  get isGone(): boolean {
    return this.statusCode === 410;
  }
}

function parseStatusBody(body: unknown): StatusBody {
  if (typeof body === 'string') {
    try {
      return parseStatusBody(JSON.parse(body));
    } catch {
      return { message: body.slice(0, 500) };
    }
  }
  return typeof body === 'object' && body !== null ? (body as StatusBody) : {};
}

/**
 * The one place client-node's failures become KubeApiError: ApiException from the typed and
 * object clients, and the `statusCode`-carrying errors of watches. Anything else (a refused
 * connection, a bug) is not an API answer and yields undefined.
 */
export function toKubeApiError(err: unknown): KubeApiError | undefined {
  if (err instanceof KubeApiError) return err;
  if (err instanceof ApiException) {
    const status = parseStatusBody(err.body);
    return new KubeApiError({
      statusCode: err.code,
      reason: status.reason,
      message: status.message ?? `Kubernetes API answered ${err.code}`,
      causes: status.details?.causes,
      cause: err,
    });
  }
  const statusCode = (err as { statusCode?: unknown } | null)?.statusCode;
  if (typeof statusCode === 'number') {
    return new KubeApiError({
      statusCode,
      message: (err as Error).message ?? `Kubernetes API answered ${statusCode}`,
      cause: err,
    });
  }
  return undefined;
}

export function isConflict(err: unknown): boolean {
  return toKubeApiError(err)?.isConflict ?? false;
}

export function isNotFound(err: unknown): boolean {
  return toKubeApiError(err)?.isNotFound ?? false;
}

export function isAlreadyExists(err: unknown): boolean {
  return toKubeApiError(err)?.isAlreadyExists ?? false;
}

/** Runs one API call and rethrows its failure as a KubeApiError when it is one. */
export async function callKube<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw toKubeApiError(err) ?? err;
  }
}
