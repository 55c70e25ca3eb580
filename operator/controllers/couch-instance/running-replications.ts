import { EngineQueryError, getEngineJson, type EngineQuery } from './engine-query.js';

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
export async function countRunningReplications(query: EngineQuery): Promise<number> {
  const body = await getEngineJson(query, '/_scheduler/jobs');
  if (!isSchedulerJobs(body))
    throw new EngineQueryError('BadResponse', `${query.origin}/_scheduler/jobs: no jobs list in the answer`);
  return body.jobs.filter((job) => typeof job.pid === 'string').length;
}
