import got, { HTTPError, ParseError, TimeoutError } from 'got';

export type ReplicationQueryErrorCode =
  'Unauthorized' | 'HttpError' | 'Timeout' | 'Unreachable' | 'BadResponse';

/** The instance could not say whether replication jobs run. Carries no credentials. */
export class ReplicationQueryError extends Error {
  constructor(
    readonly code: ReplicationQueryErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ReplicationQueryError';
  }
}

export interface RunningReplicationsQuery {
  /** The instance's CouchDB, `http://<pod ip>:<port>`. */
  origin: string;
  /** The instance's server admin: /_scheduler/jobs is admin-only. */
  credentials: { username: string; password: string };
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

/** GET /_scheduler/jobs as CouchDB 3.x answers it, as far as it is read here. */
interface SchedulerJobs {
  jobs: { pid?: unknown }[];
}

function isSchedulerJobs(body: unknown): body is SchedulerJobs {
  if (typeof body !== 'object' || body === null) return false;
  const jobs = (body as { jobs?: unknown }).jobs;
  return Array.isArray(jobs) && jobs.every((job) => typeof job === 'object' && job !== null);
}

/**
 * How many replication jobs the instance's own replicator runs right now. CouchDB 3.x's GET
 * /_scheduler/jobs lists every job its scheduler holds and gives a `pid` only to the running ones;
 * a pending job, or one backing off after a crash, has `pid: null` and does not count. One attempt,
 * no retry: the caller decides what no answer means.
 */
export async function countRunningReplications(query: RunningReplicationsQuery): Promise<number> {
  const { username, password } = query.credentials;
  let body: unknown;
  try {
    body = await got(new URL('/_scheduler/jobs', query.origin), {
      headers: {
        accept: 'application/json',
        authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`,
      },
      timeout: { request: query.timeoutMs },
      retry: { limit: 0 },
      signal: query.signal,
    }).json();
  } catch (err) {
    throw queryError(query.origin, err);
  }
  if (!isSchedulerJobs(body))
    throw new ReplicationQueryError(
      'BadResponse',
      `${query.origin}/_scheduler/jobs: no jobs list in the answer`,
    );
  return body.jobs.filter((job) => typeof job.pid === 'string').length;
}

function queryError(origin: string, err: unknown): ReplicationQueryError {
  const where = `${origin}/_scheduler/jobs`;
  if (err instanceof HTTPError) {
    const status = err.response.statusCode;
    const code = status === 401 || status === 403 ? 'Unauthorized' : 'HttpError';
    return new ReplicationQueryError(code, `${where} answered ${status}`, { cause: err });
  }
  if (err instanceof TimeoutError)
    return new ReplicationQueryError('Timeout', `${where} did not answer in time`, { cause: err });
  if (err instanceof ParseError)
    return new ReplicationQueryError('BadResponse', `${where}: the answer is not JSON`, { cause: err });
  const reason = err instanceof Error ? err.message : String(err);
  return new ReplicationQueryError('Unreachable', `${where}: ${reason}`, { cause: err });
}
