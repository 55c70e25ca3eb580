import type { Logger } from 'winston';
import { CouchInstanceEventReason } from '../../../api/conditions.js';
import type { CouchInstance, CouchInstanceStatus } from '../../../api/couch-instance.js';
import type { EventRecorder } from '../../../kube/events.js';
import type { HibernationDecision } from './hibernation.js';
import type { CouchInstanceMetrics } from './metrics.js';
import { newlyPastStartDeadline } from './start-deadline.js';
import { newlyUnschedulable } from './status.js';
import type { VolumeGrowthOutcome } from './volume-growth.js';

/**
 * The Events, counters and log lines of what a pass changed: hibernated, woken, newly
 * unschedulable, newly past its start deadline, started. Recorded after the status that tells of
 * them is written.
 */
export async function announceTransitions(options: {
  instance: CouchInstance;
  decision: HibernationDecision;
  status: CouchInstanceStatus;
  events: EventRecorder;
  metrics: CouchInstanceMetrics;
  logger: Logger;
}): Promise<void> {
  const { instance, decision, status, events, metrics, logger } = options;
  if (decision.transition === 'Hibernate') {
    metrics.countHibernation();
    logger.info('hibernated', { lastActivityTime: decision.lastActivityTime });
    await events.record(instance, {
      type: 'Normal',
      reason: CouchInstanceEventReason.Hibernated,
      message: `no activity since ${decision.lastActivityTime ?? 'creation'}: scaled to zero, data kept`,
    });
  } else if (decision.transition === 'Wake') {
    metrics.countWake();
    logger.info('woken', { reason: decision.reason });
    await events.record(instance, {
      type: 'Normal',
      reason: CouchInstanceEventReason.Woken,
      message:
        decision.reason === 'KeepAlive' ? 'keepAlive turned on: scaling up' : 'wake requested: scaling up',
    });
  }
  const cannotSchedule = newlyUnschedulable(instance.status, status);
  if (cannotSchedule !== undefined) {
    await events.record(instance, {
      type: 'Warning',
      reason: CouchInstanceEventReason.Unschedulable,
      message: cannotSchedule,
    });
  }
  const pastDeadline = newlyPastStartDeadline(instance.status, status);
  if (pastDeadline !== undefined) {
    logger.warn('CouchDB has not answered within the start deadline', { cause: pastDeadline });
    await events.record(instance, {
      type: 'Warning',
      reason: CouchInstanceEventReason.StartDeadlineExceeded,
      message: pastDeadline,
    });
  }
  if (status.phase === 'Running' && instance.status?.phase !== 'Running') {
    await events.record(instance, {
      type: 'Normal',
      reason: CouchInstanceEventReason.Started,
      message: 'CouchDB is ready',
    });
  }
}

/** The Event of a volume growth that was asked for or refused; nothing when nothing happened. */
export async function announceVolumeGrowth(options: {
  instance: CouchInstance;
  claimName: string;
  size: string;
  outcome: VolumeGrowthOutcome;
  events: EventRecorder;
}): Promise<void> {
  const { instance, claimName, size, outcome, events } = options;
  if (outcome.result === 'requested') {
    await events.record(instance, {
      type: 'Normal',
      reason: CouchInstanceEventReason.VolumeExpansionRequested,
      message: `growing PersistentVolumeClaim ${claimName} from ${outcome.from} to ${outcome.to}`,
    });
  } else if (outcome.result === 'refused') {
    await events.record(instance, {
      type: 'Warning',
      reason: CouchInstanceEventReason.VolumeExpansionRefused,
      message: `PersistentVolumeClaim ${claimName} cannot grow to ${size}: ${outcome.message}`,
    });
  }
}
