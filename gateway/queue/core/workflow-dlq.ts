import { DLQ_ID_PATTERN, type DeadLetter } from './dead-letter.js';
import { buildDeadLetterAnswer, type DeadLetterAnswer } from './dlq-answer.js';
import { InvalidRequestError } from './errors.js';
import {
  hasFilters,
  labelsOf,
  matchesFilters,
  parseListQuery,
  type FilterName,
  type ListQuery,
} from './list-query.js';
import {
  FAILURE_CALLBACK_STATES,
  type FailureCallbackState,
  type WorkflowRunRecord,
} from './workflow-message.js';

/**
 * The workflow DLQ's query and answers (docs/workflow.md), as @upstash/workflow 1.3.3's
 * `client.dlq` sends and reads them: its entries are the dead letters of workflow runs' steps
 * (DeadLetter.workflow), listed by `GET /v2/dlq?source=workflow` and acted on by the
 * `/v2/workflows/dlq` routes, by `dlqIds`, by filters, or every entry a page at a time (the SDK's
 * `all: true` sends `count` alone). Unknown parameters and bad values are a 400 naming the
 * parameter, and a bulk request that names nothing is a 400: nothing widens to every entry by
 * mistake. Pure: no Redis.
 */

export interface WorkflowDlqQuery {
  /** The dead letters' own filters (dlqId, url = workflowUrl, label, dates on the failure time, ...). */
  list: ListQuery;
  runIds?: string[];
  /** The run's creation time, ms. */
  createdAt?: number;
  failureFunctionState?: FailureCallbackState;
}

/** The most entries a list page holds (QStash's maximum). */
export const WORKFLOW_DLQ_MAX_PAGE = 100;

const LIST_FILTERS: readonly FilterName[] = [
  'dlqId',
  'url',
  'label',
  'callerIp',
  'flowControlKey',
  'fromDate',
  'toDate',
  'responseStatus',
];

/**
 * `list`: GET (the SDK also sends `source=workflow` and the deprecated `url` and
 * `responseStatus`); otherwise a bulk action (resume, restart, delete), which must name its
 * entries. `maxCount`: the largest `count` taken.
 */
export function parseWorkflowDlqQuery(
  query: URLSearchParams,
  spec: { list: boolean; maxCount: number },
): WorkflowDlqQuery {
  const rest = new URLSearchParams();
  const result: Omit<WorkflowDlqQuery, 'list'> = {};
  for (const [name, value] of query) {
    if (name === 'source' && spec.list) {
      if (value !== 'workflow')
        throw new InvalidRequestError(`query parameter source ${JSON.stringify(value)} is not workflow`);
    } else if (name === 'workflowRunId') {
      if (value === '') throw new InvalidRequestError('query parameter workflowRunId must not be empty');
      result.runIds = [...(result.runIds ?? []), value];
    } else if (name === 'workflowCreatedAt') {
      if (!/^\d{1,16}$/.test(value))
        throw new InvalidRequestError('query parameter workflowCreatedAt must be a time in ms');
      result.createdAt = Number(value);
    } else if (name === 'failureFunctionState') {
      if (!(FAILURE_CALLBACK_STATES as readonly string[]).includes(value))
        throw new InvalidRequestError(
          `query parameter failureFunctionState must be one of ${FAILURE_CALLBACK_STATES.join(', ')}`,
        );
      result.failureFunctionState = value as FailureCallbackState;
    } else if (name === 'workflowUrl' || (name === 'url' && spec.list)) rest.append('url', value);
    else if ((name === 'responseStatus' || name === 'url') && !spec.list)
      throw new InvalidRequestError(`unknown query parameter ${JSON.stringify(name)}`);
    else if (name === 'dlqId') throw new InvalidRequestError('unknown query parameter "dlqId": it is dlqIds');
    else rest.append(name, value);
  }
  const list = parseListQuery(rest, { filters: LIST_FILTERS, maxCount: spec.maxCount, cursor: true });
  if (list.cursor !== undefined && !DLQ_ID_PATTERN.test(list.cursor))
    throw new InvalidRequestError(
      `query parameter cursor ${JSON.stringify(list.cursor)} is not a cursor this API gave`,
    );
  const parsed: WorkflowDlqQuery = { list, ...result };
  const { dlqId, ...filters } = list.filters;
  if (dlqId !== undefined && (hasWorkflowFilters(parsed) || list.cursor !== undefined))
    throw new InvalidRequestError('dlqIds cannot be combined with filters or a cursor');
  if (
    !spec.list &&
    dlqId === undefined &&
    !hasFilters(filters) &&
    !hasWorkflowFilters(parsed) &&
    // A cursor alone names nothing: it would take a default page of every entry. The SDK's
    // `all: true` sends count with it.
    list.count === undefined
  )
    throw new InvalidRequestError(
      'the request names no workflow dead letters: give dlqIds, filters, or count to take every entry a page at a time',
    );
  return parsed;
}

function hasWorkflowFilters(query: WorkflowDlqQuery): boolean {
  const { dlqId: _ids, ...filters } = query.list.filters;
  return (
    hasFilters(filters) ||
    query.runIds !== undefined ||
    query.createdAt !== undefined ||
    query.failureFunctionState !== undefined
  );
}

/** Whether a dead letter is a workflow DLQ entry matching the query's filters but the run's state. */
export function matchesWorkflowLetter(letter: DeadLetter, query: WorkflowDlqQuery): boolean {
  const { workflow } = letter;
  if (workflow === undefined) return false;
  if (query.runIds !== undefined && !query.runIds.includes(workflow.runId)) return false;
  if (query.createdAt !== undefined && workflow.createdAt !== query.createdAt) return false;
  const { dlqId: _ids, ...filters } = query.list.filters;
  return matchesFilters(
    {
      url: letter.destination,
      labels: labelsOf(letter.label),
      time: letter.failedAt,
      messageId: letter.messageId,
      flowControlKey: letter.flowControl?.key,
      callerIp: letter.callerIp,
      ...(letter.lastStatus !== undefined && { responseStatus: letter.lastStatus }),
    },
    filters,
  );
}

/** A workflow DLQ entry as the SDK's `DLQMessage` reads it. */
export interface WorkflowDeadLetterAnswer extends DeadLetterAnswer {
  workflowRunId: string;
  workflowCreatedAt: number;
  workflowUrl: string;
  /** The SDK's spelling of the publisher's address (the message DLQ's is callerIp). */
  callerIP?: string;
  failureCallbackInfo?: { state: FailureCallbackState };
  failureFunctionState?: FailureCallbackState;
}

/** `run`: the letter's run while it is kept (its failure callback's state). */
export function buildWorkflowDeadLetterAnswer(
  letter: DeadLetter & { workflow: NonNullable<DeadLetter['workflow']> },
  run: WorkflowRunRecord | undefined,
): WorkflowDeadLetterAnswer {
  const answer: WorkflowDeadLetterAnswer = {
    ...buildDeadLetterAnswer(letter),
    workflowRunId: letter.workflow.runId,
    workflowCreatedAt: letter.workflow.createdAt,
    workflowUrl: letter.destination,
  };
  if (letter.callerIp !== undefined) answer.callerIP = letter.callerIp;
  const state = run?.callback?.state;
  if (state !== undefined) {
    answer.failureCallbackInfo = { state };
    answer.failureFunctionState = state;
  }
  return answer;
}
