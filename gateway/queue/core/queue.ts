import type { BindingQuotas } from './quotas.js';

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
