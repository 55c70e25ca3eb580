import { randomBytes } from 'node:crypto';
import { labelFields } from './list-query.js';
import { flowControlFields } from './flow-control.js';
import type { QueueMessage } from './message.js';
import { bodyFields, headerLists } from './message-answer.js';
import { redactHeaderLists } from './redact-fields.js';

/** The SDK's `Schedule.lastScheduleStates` values: message id -> one of these. */
export type LastScheduleState = 'IN_PROGRESS' | 'SUCCESS' | 'FAIL';

/** What is kept of a schedule beside its message template (keys.schedules). */
export interface ScheduleRecord {
  scheduleId: string;
  /** Upstash-Cron as given. */
  cron: string;
  /** A URL, or a URL group's name (each tick then fans out to the group's endpoints at that time). */
  destination: string;
  createdAt: number;
  isPaused: boolean;
  /** Upstash-Delay: each tick's message is delivered this long after the tick (ms). */
  delayMs?: number;
}

/** A schedule as QStash answers it (GET /v2/schedules, the SDK's `Schedule`). */
export interface QStashSchedule {
  scheduleId: string;
  cron: string;
  createdAt: number;
  destination: string;
  method: string;
  header: Record<string, string[]>;
  body?: string;
  bodyBase64?: string;
  retries: number;
  /** Upstash-Delay, in seconds. */
  delay?: number;
  /** Upstash-Callback and Upstash-Failure-Callback, which every tick's message carries. */
  callback?: string;
  failureCallback?: string;
  label?: string;
  /** Upstash-Label split at commas (the SDK sends `label: [...]` as "a,b"). */
  labels?: string[];
  /** Upstash-Queue-Name: each tick is enqueued in this queue. */
  queueName?: string;
  retryDelayExpression?: string;
  /** Upstash-Flow-Control-Key and -Value: every tick's message waits on this key. */
  flowControlKey?: string;
  parallelism?: number;
  rate?: number;
  /** Seconds. */
  period?: number;
  timeout?: number;
  /**
   * The creator's address: QStash's schedule docs (upstash/docs qstash/api/schedules/get.mdx) name
   * it `callerIP`, SDK 2.12's `Schedule` type has both spellings, so both are sent.
   */
  callerIP?: string;
  callerIp?: string;
  isPaused: boolean;
  lastScheduleTime?: number;
  nextScheduleTime?: number;
  /** The last tick's messages: id -> state (GET /v2/schedules/{id} only; last-schedule-states.ts). */
  lastScheduleStates?: Record<string, LastScheduleState>;
}

export function newScheduleId(): string {
  return `scd_${randomBytes(18).toString('base64url')}`;
}

/** The answer for one schedule, from its record, its template and where its ticks stand. */
export function toQStashSchedule(
  record: ScheduleRecord,
  template: QueueMessage,
  ticks: { last?: number | undefined; next?: number | undefined },
): QStashSchedule {
  const schedule: QStashSchedule = {
    scheduleId: record.scheduleId,
    cron: record.cron,
    createdAt: record.createdAt,
    destination: record.destination,
    method: template.method,
    header: redactHeaderLists(headerLists(template.headers, template.headerNames), template.redact),
    retries: template.retries,
    isPaused: record.isPaused,
  };
  if (template.body.length > 0) Object.assign(schedule, bodyFields(template.body, template.redact));
  if (template.callback !== undefined) schedule.callback = template.callback.url;
  if (template.failureCallback !== undefined) schedule.failureCallback = template.failureCallback.url;
  if (record.delayMs !== undefined) schedule.delay = Math.round(record.delayMs / 1000);
  Object.assign(schedule, labelFields(template.label));
  if (template.queueName !== undefined) schedule.queueName = template.queueName;
  if (template.retryDelay !== undefined) schedule.retryDelayExpression = template.retryDelay;
  Object.assign(schedule, flowControlFields(template.flowControl));
  if (template.timeoutMs !== undefined) schedule.timeout = Math.ceil(template.timeoutMs / 1000);
  if (template.callerIp !== undefined)
    Object.assign(schedule, { callerIP: template.callerIp, callerIp: template.callerIp });
  if (ticks.last !== undefined) schedule.lastScheduleTime = ticks.last;
  if (ticks.next !== undefined) schedule.nextScheduleTime = ticks.next;
  return schedule;
}
