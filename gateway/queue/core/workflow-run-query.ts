import { InvalidRequestError } from './errors.js';
import { labelsOf } from './list-query.js';
import { WORKFLOW_RUN_STATES, type WorkflowRunState } from './workflow-message.js';

/**
 * The query of the workflow run routes, as the SDK sends it: `client.cancel` (DELETE
 * /v2/workflows/runs: workflowRunIds, or filters with `count`, or `count` alone for all) and
 * `client.logs` (GET /v2/workflows/events: filters with `count` and `cursor`, and
 * `groupBy=workflowRunId`). A repeated parameter is a list; unknown parameters and bad values are
 * a 400 naming the parameter, so a typo never widens a cancel to every run.
 */

export interface WorkflowRunFilters {
  runIds?: string[];
  /** workflowUrl: a prefix, or the whole URL with workflowUrlExactMatch=true. */
  url?: string;
  urlExact?: boolean;
  label?: string[];
  state?: WorkflowRunState[];
  /** Epoch ms, inclusive, on the run's creation time. */
  fromDate?: number;
  toDate?: number;
  createdAt?: number;
  flowControlKey?: string[];
}

export interface WorkflowRunQuery {
  filters: WorkflowRunFilters;
  count?: number;
  cursor?: string;
}

/** What a filter is matched against: one run. */
export interface FilterableRun {
  runId: string;
  url: string;
  label?: string | undefined;
  state: WorkflowRunState;
  createdAt: number;
  flowControlKey?: string | undefined;
}

function wholeNumber(name: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max)
    throw new InvalidRequestError(`query parameter ${name} must be a whole number from ${min} to ${max}`);
  return Number(text);
}

const TIME_MAX = 8_640_000_000_000_000;

/** `allowed`: the parameters the route takes beside count and cursor; `maxCount`: the largest page. */
export function parseWorkflowRunQuery(
  query: URLSearchParams,
  spec: { allowed: readonly string[]; maxCount: number },
): WorkflowRunQuery {
  const result: WorkflowRunQuery = { filters: {} };
  const { filters } = result;
  for (const name of new Set(query.keys())) {
    const values = query.getAll(name);
    const last = values[values.length - 1]!;
    if (name === 'count') result.count = wholeNumber(name, last, 1, spec.maxCount);
    else if (name === 'cursor') {
      if (last !== '') result.cursor = last;
    } else if (!spec.allowed.includes(name))
      throw new InvalidRequestError(`unknown query parameter ${JSON.stringify(name)}`);
    else if (name === 'groupBy') {
      if (last !== 'workflowRunId')
        throw new InvalidRequestError(`query parameter groupBy ${JSON.stringify(last)} is not workflowRunId`);
    } else if (name === 'workflowRunIds' || name === 'workflowRunId')
      filters.runIds = [...(filters.runIds ?? []), ...values];
    else if (name === 'workflowUrl') filters.url = last;
    else if (name === 'workflowUrlExactMatch') {
      if (last !== 'true' && last !== 'false')
        throw new InvalidRequestError('query parameter workflowUrlExactMatch must be true or false');
      filters.urlExact = last === 'true';
    } else if (name === 'label') filters.label = [...(filters.label ?? []), ...values];
    else if (name === 'flowControlKey')
      filters.flowControlKey = [...(filters.flowControlKey ?? []), ...values];
    else if (name === 'state') {
      for (const value of values)
        if (!(WORKFLOW_RUN_STATES as readonly string[]).includes(value))
          throw new InvalidRequestError(
            `query parameter state ${JSON.stringify(value)} is not one of ${WORKFLOW_RUN_STATES.join(', ')}`,
          );
      filters.state = values as WorkflowRunState[];
    } else if (name === 'fromDate' || name === 'toDate' || name === 'workflowCreatedAt')
      filters[name === 'workflowCreatedAt' ? 'createdAt' : name] = wholeNumber(name, last, 0, TIME_MAX);
  }
  if (filters.urlExact !== undefined && filters.url === undefined)
    throw new InvalidRequestError('query parameter workflowUrlExactMatch is set without workflowUrl');
  if (filters.fromDate !== undefined && filters.toDate !== undefined && filters.fromDate > filters.toDate)
    throw new InvalidRequestError('query parameter fromDate is after toDate');
  return result;
}

export function hasRunFilters(filters: WorkflowRunFilters): boolean {
  return Object.keys(filters).length > 0;
}

export function matchesRun(run: FilterableRun, filters: WorkflowRunFilters): boolean {
  const { runIds, url, urlExact, label, state, fromDate, toDate, createdAt, flowControlKey } = filters;
  if (runIds !== undefined && !runIds.includes(run.runId)) return false;
  if (url !== undefined && !(urlExact ? run.url === url : run.url.startsWith(url))) return false;
  if (label !== undefined && !labelsOf(run.label).some((l) => label.includes(l))) return false;
  if (state !== undefined && !state.includes(run.state)) return false;
  if (fromDate !== undefined && run.createdAt < fromDate) return false;
  if (toDate !== undefined && run.createdAt > toDate) return false;
  if (createdAt !== undefined && run.createdAt !== createdAt) return false;
  if (flowControlKey !== undefined && !flowControlKey.includes(run.flowControlKey ?? '')) return false;
  return true;
}
