import { InvalidRequestError } from './errors.js';

/**
 * The query parameters of the messages, DLQ and events routes, as the SDK sends them: filters
 * (a repeated parameter is a list, matched with OR; different filters combine with AND),
 * `count` and `cursor`. Unknown parameters and bad values are a 400 naming the parameter, so a
 * typo never widens a bulk cancel or delete to everything.
 */

export const EVENT_STATES = [
  'CREATED',
  'ACTIVE',
  'RETRY',
  'ERROR',
  'DELIVERED',
  'FAILED',
  'CANCEL_REQUESTED',
  'CANCELLED',
] as const;
export type EventState = (typeof EVENT_STATES)[number];
const IN_PROGRESS_STATES: readonly EventState[] = ['ACTIVE', 'RETRY', 'ERROR'];

export interface ListFilters {
  url?: string[];
  host?: string[];
  path?: string[];
  label?: string[];
  /** The URL group a message was published to (QStash's `topicName`, the SDK's `urlGroup`). */
  topicName?: string[];
  /** The URL group endpoint's name a message was fanned out to. */
  endpointName?: string[];
  /** The schedule whose tick created a message. */
  scheduleId?: string[];
  /** The queue a message was enqueued in. */
  queueName?: string[];
  /** The message's Upstash-Flow-Control-Key. */
  flowControlKey?: string[];
  /** The publisher's address (QStash's `callerIp`). */
  callerIp?: string[];
  /** Epoch ms, inclusive. */
  fromDate?: number;
  /** Epoch ms, inclusive. */
  toDate?: number;
  messageId?: string[];
  dlqId?: string[];
  responseStatus?: number[];
  state?: EventState[];
}

export type FilterName = keyof ListFilters;

export interface ListQuery {
  filters: ListFilters;
  count?: number;
  cursor?: string;
}

/** The filters on a message's own fields, which the messages, DLQ and events routes all take. */
export const MESSAGE_FILTERS: readonly FilterName[] = [
  'messageId',
  'url',
  'host',
  'path',
  'label',
  'topicName',
  'endpointName',
  'scheduleId',
  'queueName',
  'flowControlKey',
  'callerIp',
  'fromDate',
  'toDate',
];

export interface ListQuerySpec {
  /** The filters this route takes. */
  filters: readonly FilterName[];
  /** Whether `count` and `cursor` are taken, and the most one page may hold. */
  maxCount?: number;
  /** Whether `cursor` is taken. */
  cursor?: boolean;
}

/** Parameter names the SDK sends, mapped to the filter each sets. */
const PARAMETERS: Readonly<Record<string, FilterName>> = {
  url: 'url',
  host: 'host',
  path: 'path',
  label: 'label',
  topicName: 'topicName',
  urlGroup: 'topicName',
  endpointName: 'endpointName',
  scheduleId: 'scheduleId',
  queueName: 'queueName',
  flowControlKey: 'flowControlKey',
  callerIp: 'callerIp',
  fromDate: 'fromDate',
  toDate: 'toDate',
  messageId: 'messageId',
  messageIds: 'messageId',
  dlqIds: 'dlqId',
  dlqId: 'dlqId',
  responseStatus: 'responseStatus',
  state: 'state',
};

/** QStash filters on things Settee does not have; asked for, they are refused rather than ignored. */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  api: 'API integrations',
  workflowRunId: 'workflows',
};

function wholeNumber(name: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max)
    throw new InvalidRequestError(`query parameter ${name} must be a whole number from ${min} to ${max}`);
  return Number(text);
}

function setFilter(filters: ListFilters, filter: FilterName, parameter: string, values: string[]): void {
  switch (filter) {
    case 'fromDate':
    case 'toDate':
      if (values.length > 1) throw new InvalidRequestError(`query parameter ${parameter} is given twice`);
      filters[filter] = wholeNumber(parameter, values[0]!, 0, Number.MAX_SAFE_INTEGER);
      return;
    case 'responseStatus':
      filters.responseStatus = values.map((v) => wholeNumber(parameter, v, 100, 599));
      return;
    case 'state':
      filters.state = values.flatMap((value) => {
        // QStash's logs docs: IN_PROGRESS is "one of ACTIVE, RETRY or ERROR".
        if (value === 'IN_PROGRESS') return IN_PROGRESS_STATES;
        if (!(EVENT_STATES as readonly string[]).includes(value))
          throw new InvalidRequestError(
            `query parameter state must be one of ${EVENT_STATES.join(', ')} or IN_PROGRESS`,
          );
        return [value as EventState];
      });
      return;
    default:
      if (values.some((v) => v === ''))
        throw new InvalidRequestError(`query parameter ${parameter} must not be empty`);
      filters[filter] = [...(filters[filter] ?? []), ...values];
  }
}

export function parseListQuery(query: URLSearchParams, spec: ListQuerySpec): ListQuery {
  const result: ListQuery = { filters: {} };
  for (const parameter of new Set(query.keys())) {
    const values = query.getAll(parameter);
    if (parameter === 'count' && spec.maxCount !== undefined) {
      result.count = wholeNumber('count', values[values.length - 1]!, 1, spec.maxCount);
      continue;
    }
    if (parameter === 'cursor' && spec.cursor) {
      // The SDK's loops send an empty cursor for the first page.
      if (values[values.length - 1] !== '') result.cursor = values[values.length - 1];
      continue;
    }
    const unsupported = UNSUPPORTED[parameter];
    if (unsupported !== undefined)
      throw new InvalidRequestError(`filter ${parameter} is not supported: Settee has no ${unsupported}`);
    const filter = PARAMETERS[parameter];
    if (filter === undefined || !spec.filters.includes(filter))
      throw new InvalidRequestError(`unknown query parameter ${JSON.stringify(parameter)}`);
    setFilter(result.filters, filter, parameter, values);
  }
  const { fromDate, toDate } = result.filters;
  if (fromDate !== undefined && toDate !== undefined && fromDate > toDate)
    throw new InvalidRequestError('query parameter fromDate is after toDate');
  return result;
}

export function hasFilters(filters: ListFilters): boolean {
  return Object.keys(filters).length > 0;
}

/** What a filter is matched against: a message, a dead letter or an event. */
export interface Filterable {
  url: string;
  labels: readonly string[];
  /** Epoch ms: the publish time of a message, the failure time of a dead letter, an event's time. */
  time: number;
  messageId: string;
  topicName?: string | undefined;
  endpointName?: string | undefined;
  scheduleId?: string | undefined;
  queueName?: string | undefined;
  flowControlKey?: string | undefined;
  callerIp?: string | undefined;
  dlqId?: string;
  responseStatus?: number;
  state?: EventState;
}

function urlParts(url: string): { host: string; path: string } {
  try {
    const parsed = new URL(url);
    return { host: parsed.host, path: parsed.pathname };
  } catch {
    return { host: '', path: '' };
  }
}

export function matchesFilters(item: Filterable, filters: ListFilters): boolean {
  const oneOf = <T>(wanted: readonly T[] | undefined, value: T | undefined): boolean =>
    wanted === undefined || (value !== undefined && wanted.includes(value));
  if (filters.fromDate !== undefined && item.time < filters.fromDate) return false;
  if (filters.toDate !== undefined && item.time > filters.toDate) return false;
  if (!oneOf(filters.url, item.url) || !oneOf(filters.messageId, item.messageId)) return false;
  if (!oneOf(filters.dlqId, item.dlqId) || !oneOf(filters.responseStatus, item.responseStatus)) return false;
  if (!oneOf(filters.state, item.state)) return false;
  if (!oneOf(filters.topicName, item.topicName) || !oneOf(filters.scheduleId, item.scheduleId)) return false;
  if (!oneOf(filters.queueName, item.queueName)) return false;
  if (!oneOf(filters.flowControlKey, item.flowControlKey)) return false;
  if (!oneOf(filters.callerIp, item.callerIp)) return false;
  if (!oneOf(filters.endpointName, item.endpointName)) return false;
  if (filters.label !== undefined && !item.labels.some((l) => filters.label!.includes(l))) return false;
  if (filters.host !== undefined || filters.path !== undefined) {
    const { host, path } = urlParts(item.url);
    if (!oneOf(filters.host, host) || !oneOf(filters.path, path)) return false;
  }
  return true;
}

/** Upstash-Label holds one label, or several joined with commas (the SDK's `label: [...]`). */
export function labelsOf(label: string | undefined): string[] {
  return label === undefined
    ? []
    : label
        .split(',')
        .map((l) => l.trim())
        .filter((l) => l !== '');
}

/**
 * A stored Upstash-Label as QStash answers it: `label` the first of its labels, `labels` all of
 * them (`Upstash-Label: a,b` answers `"label": "a", "labels": ["a", "b"]`); nothing when unlabelled.
 */
export function labelFields(label: string | undefined): { label?: string; labels?: string[] } {
  const labels = labelsOf(label);
  return labels.length === 0 ? {} : { label: labels[0]!, labels };
}
