import got, { HTTPError, ParseError, TimeoutError } from 'got';

export type EngineQueryErrorCode = 'Unauthorized' | 'HttpError' | 'Timeout' | 'Unreachable' | 'BadResponse';

/** The instance's engine did not answer an admin read as expected. Carries no credentials. */
export class EngineQueryError extends Error {
  constructor(
    readonly code: EngineQueryErrorCode,
    message: string,
    options?: { cause?: unknown; status?: number },
  ) {
    super(message, options);
    this.status = options?.status;
    this.name = 'EngineQueryError';
  }

  /** The HTTP status the engine answered, when it answered one. */
  readonly status: number | undefined;
}

/** An admin read straight from an instance's pod: it bypasses the gateway, so it is no activity. */
export interface EngineQuery {
  /** The instance's CouchDB, `http://<pod ip>:<port>`. */
  origin: string;
  /** The server admin: what is read here (every database's info, /_scheduler/jobs) is admin-only. */
  credentials: { username: string; password: string };
  /** Deadline of each request. */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

/** One GET of `path` as JSON. One attempt, no retry: the caller decides what no answer means. */
export async function getEngineJson(query: EngineQuery, path: string): Promise<unknown> {
  const { username, password } = query.credentials;
  const where = `${query.origin}${path}`;
  try {
    return await got(where, {
      headers: {
        accept: 'application/json',
        authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`,
      },
      timeout: { request: query.timeoutMs },
      retry: { limit: 0 },
      signal: query.signal,
    }).json();
  } catch (err) {
    throw engineQueryError(where, err);
  }
}

function engineQueryError(where: string, err: unknown): EngineQueryError {
  if (err instanceof HTTPError) {
    const status = err.response.statusCode;
    const code = status === 401 || status === 403 ? 'Unauthorized' : 'HttpError';
    return new EngineQueryError(code, `${where} answered ${status}`, { cause: err, status });
  }
  if (err instanceof TimeoutError)
    return new EngineQueryError('Timeout', `${where} did not answer in time`, { cause: err });
  if (err instanceof ParseError)
    return new EngineQueryError('BadResponse', `${where}: the answer is not JSON`, { cause: err });
  const reason = err instanceof Error ? err.message : String(err);
  return new EngineQueryError('Unreachable', `${where}: ${reason}`, { cause: err });
}
