import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'winston';
import { podAddress } from '../../../api/pod-address.js';
import { errorMessage } from '../../../observability/logger.js';
import type { ObjectKey } from '../../../kube/controller-runtime/object-key.js';
import type { CouchInstanceMetrics } from './metrics.js';
import type { EngineQuery } from './engine-query.js';
import { countRunningReplications } from './running-replications.js';

export interface ReplicationCheck {
  key: ObjectKey;
  /** The instance's pod from the informer cache; no pod, or no address yet, means nothing to ask. */
  pod: V1Pod | undefined;
  credentials: { username: string; password: string };
  logger: Logger;
  /** Aborted on shutdown or lost leadership: then the check throws rather than let it hibernate. */
  signal: AbortSignal;
}

export interface ReplicationActivityOptions {
  timeoutMs: number;
  metrics: CouchInstanceMetrics;
  now: () => Date;
}

/**
 * Replications that an instance's own replicator runs (documents in its /_replicator, e.g. a
 * continuous pull from another server) never pass the gateway, so no activity Lease tells of them.
 * When an instance would hibernate for being idle, the reconciler asks it here whether replication
 * jobs are running; a yes is activity at that moment, remembered per instance so that every
 * decision until the next idle deadline sees it. No answer (no address, unreachable, 401, timeout)
 * counts as no: a broken probe must never keep an instance up forever.
 */
export class ReplicationActivity {
  private readonly runningAt = new Map<ObjectKey, number>();

  constructor(private readonly options: ReplicationActivityOptions) {}

  /** Epoch ms of the instance's last "jobs are running" answer, while that is its latest answer. */
  lastSeenRunning(key: ObjectKey): number | undefined {
    return this.runningAt.get(key);
  }

  /** Asks the instance; resolves to the moment of a "jobs are running" answer, else undefined. */
  async check(check: ReplicationCheck): Promise<number | undefined> {
    const { key, logger, signal } = check;
    const wasRunning = this.runningAt.delete(key);
    const address = check.pod && podAddress(check.pod);
    if (!address) {
      logger.debug('no pod address to ask about replication jobs');
      return undefined;
    }
    const query: EngineQuery = {
      origin: address.origin,
      credentials: check.credentials,
      timeoutMs: this.options.timeoutMs,
      signal,
    };
    let running: number;
    try {
      running = await countRunningReplications(query);
    } catch (err) {
      if (signal.aborted) throw err;
      this.options.metrics.countReplicationCheck('failed');
      logger.warn('could not ask the instance about replication jobs; hibernating as if none ran', {
        error: errorMessage(err),
        code: (err as { code?: unknown }).code,
      });
      return undefined;
    }
    if (running === 0) {
      this.options.metrics.countReplicationCheck('none');
      return undefined;
    }
    this.options.metrics.countReplicationCheck('running');
    if (!wasRunning) logger.info('replication jobs running: staying awake', { running });
    const at = this.options.now().getTime();
    this.runningAt.set(key, at);
    return at;
  }

  forget(key: ObjectKey): void {
    this.runningAt.delete(key);
  }
}
