import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** How one reconcile ended; `conflict` is a 409 that was retried quickly, not an error. */
export type ReconcileOutcome = 'success' | 'requeue' | 'conflict' | 'error';

/** What the controller loop reports; controllers add their own metrics to `registry`. */
export interface ControllerMetrics {
  observeReconcile(controller: string, outcome: ReconcileOutcome, durationSeconds: number): void;
  /** Registers a callback read at scrape time, so queue depth costs nothing between scrapes. */
  trackQueueDepth(controller: string, depth: () => number): void;
}

export interface OperatorMetrics extends ControllerMetrics {
  readonly registry: Registry;
  setLeader(isLeader: boolean): void;
  countInformerRestart(resource: string): void;
}

/**
 * A registry of its own (not prom-client's global one), so two operators in one test process
 * don't share counters. Metric names are prefixed `settee_`.
 */
export function createOperatorMetrics(options: { defaultMetrics?: boolean } = {}): OperatorMetrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'settee_' });
  const reconciles = new Counter({
    name: 'settee_reconcile_total',
    help: 'Reconciles finished, by controller and outcome (success, requeue, conflict, error).',
    labelNames: ['controller', 'outcome'],
    registers: [registry],
  });
  const errors = new Counter({
    name: 'settee_reconcile_errors_total',
    help: 'Reconciles that failed and were requeued with backoff (409 conflicts excluded).',
    labelNames: ['controller'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'settee_reconcile_duration_seconds',
    help: 'Time one reconcile took.',
    labelNames: ['controller'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const queueDepths = new Map<string, () => number>();
  new Gauge({
    name: 'settee_workqueue_depth',
    help: 'Keys waiting to be reconciled, by controller.',
    labelNames: ['controller'],
    registers: [registry],
    collect() {
      for (const [controller, depth] of queueDepths) this.set({ controller }, depth());
    },
  });
  const leader = new Gauge({
    name: 'settee_leader',
    help: '1 while this replica holds the leader Lease (or leader election is off), else 0.',
    registers: [registry],
  });
  const informerRestarts = new Counter({
    name: 'settee_informer_restarts_total',
    help: 'Informers restarted after their list or watch failed, by resource path.',
    labelNames: ['resource'],
    registers: [registry],
  });
  return {
    registry,
    observeReconcile(controller, outcome, durationSeconds) {
      reconciles.inc({ controller, outcome });
      if (outcome === 'error') errors.inc({ controller });
      duration.observe({ controller }, durationSeconds);
    },
    trackQueueDepth(controller, depth) {
      queueDepths.set(controller, depth);
    },
    setLeader(isLeader) {
      leader.set(isLeader ? 1 : 0);
    },
    countInformerRestart(resource) {
      informerRestarts.inc({ resource });
    },
  };
}
