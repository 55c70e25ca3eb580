import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'winston';
import type { CouchInstanceUsage } from '../../../api/couch-instance.js';
import { podAddress } from '../../../api/pod-address.js';
import type { ObjectKey } from '../../../kube/controller-runtime/object-key.js';
import { errorMessage } from '../../../observability/logger.js';
import { measureInstanceStorage } from './instance-storage.js';

/** What one reconcile learnt about an instance's usage. */
export type UsageReading =
  | {
      result: 'measured';
      usage: Required<Pick<CouchInstanceUsage, 'storageBytes' | 'databases' | 'measuredAt'>>;
    }
  /** The measurement failed: status keeps the last usage, UsageMeasured says why. */
  | { result: 'failed'; error: string }
  /** Not due, or the instance is not running: nothing new. */
  | { result: 'unchanged' };

export interface UsageMeterOptions {
  /** SETTEE_USAGE_MEASURE_INTERVAL: at most one measurement per instance per interval. */
  intervalMs: number;
  /** SETTEE_USAGE_MEASURE_TIMEOUT: deadline of each request to the instance. */
  timeoutMs: number;
  now: () => Date;
}

export interface UsageCheck {
  key: ObjectKey;
  /** Only a running instance is measured: a hibernated one is never woken for it. */
  running: boolean;
  pod: V1Pod | undefined;
  credentials: { username: string; password: string };
  /** The last measurement in status: after an operator restart, the interval counts from it. */
  previous: CouchInstanceUsage | undefined;
  logger: Logger;
  signal: AbortSignal;
}

/**
 * Measures each running instance's stored data at a bounded rate (once per interval, counted from
 * the last attempt, failed or not, so an instance that does not answer is not asked on every
 * reconcile). A hibernated instance keeps its last measurement: its data cannot change while it
 * sleeps, and measuring it would mean waking it.
 */
export class UsageMeter {
  private readonly attemptedAt = new Map<ObjectKey, number>();

  constructor(private readonly options: UsageMeterOptions) {}

  async read(check: UsageCheck): Promise<UsageReading> {
    const { key, logger } = check;
    const address = check.pod && podAddress(check.pod);
    if (!check.running || !address?.ready || this.dueInMs(key, check.previous) > 0)
      return { result: 'unchanged' };
    const now = this.options.now();
    this.attemptedAt.set(key, now.getTime());
    try {
      const storage = await measureInstanceStorage({
        origin: address.origin,
        credentials: check.credentials,
        timeoutMs: this.options.timeoutMs,
        signal: check.signal,
      });
      return { result: 'measured', usage: { ...storage, measuredAt: now.toISOString() } };
    } catch (err) {
      if (check.signal.aborted) throw err;
      logger.warn('could not measure the instance’s storage; keeping the last measurement', {
        error: errorMessage(err),
        code: (err as { code?: unknown }).code,
      });
      return { result: 'failed', error: errorMessage(err) };
    }
  }

  /** How long until the instance is due for a measurement (0 = now). */
  dueInMs(key: ObjectKey, previous: CouchInstanceUsage | undefined): number {
    const measuredAt = previous?.measuredAt === undefined ? undefined : Date.parse(previous.measuredAt);
    const last = this.attemptedAt.get(key) ?? measuredAt;
    if (last === undefined || Number.isNaN(last)) return 0;
    return Math.max(0, last + this.options.intervalMs - this.options.now().getTime());
  }

  forget(key: ObjectKey): void {
    this.attemptedAt.delete(key);
  }
}
