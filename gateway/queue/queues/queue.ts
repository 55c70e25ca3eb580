import { InvalidRequestError } from '../errors.js';
import type { BindingQuotas } from '../quotas.js';

/** A queue as its hash field stores it (the name is the field). */
export interface QueueRecord {
  createdAt: number;
  updatedAt: number;
  /** How many of its messages may be started and not yet finished at once, across all replicas. */
  parallelism: number;
  /** A paused queue starts no message; those waiting stay, those started finish. */
  paused: boolean;
}

/** QStash's answer for a queue (the SDK's QueueResponse). */
export interface QStashQueue {
  name: string;
  createdAt: number;
  updatedAt: number;
  parallelism: number;
  /** Messages waiting for a slot. */
  lag: number;
  paused: boolean;
}

export const MAX_QUEUE_NAME_LENGTH = 128;
/** The same characters as a URL group's: no `/` or `:`, so the enqueue path stays unambiguous. */
const QUEUE_NAME = /^[A-Za-z0-9._-]+$/;

/** Checks a queue name from a path or a body; the 400 names the field. */
export function validateQueueName(value: unknown, field = 'queueName'): string {
  if (typeof value !== 'string' || value === '') throw new InvalidRequestError(`${field} is missing`);
  if (value.length > MAX_QUEUE_NAME_LENGTH)
    throw new InvalidRequestError(`${field} is longer than ${MAX_QUEUE_NAME_LENGTH} characters`);
  if (!QUEUE_NAME.test(value))
    throw new InvalidRequestError(
      `${field} ${JSON.stringify(value)} may contain only letters, digits, '-', '_' and '.'`,
    );
  return value;
}

export function toQStashQueue(name: string, record: QueueRecord, lag: number): QStashQueue {
  return {
    name,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    parallelism: record.parallelism,
    lag,
    paused: record.paused,
  };
}

/** What bounds a binding's queues (quotas.ts). */
export type QueueQuota = Pick<BindingQuotas, 'maxQueues' | 'maxParallelism'>;
