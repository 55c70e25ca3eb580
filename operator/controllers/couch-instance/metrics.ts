import { Counter, Gauge, type Registry } from 'prom-client';
import { COUCH_INSTANCE_PHASES, type CouchInstancePhase } from '../../../api/couch-instance.js';
import type { ObjectKey } from '../../../kube/controller-runtime/object-key.js';

export type ReplicationCheckResult = 'running' | 'none' | 'failed';

/** The couch-instance controller's own metrics, beside the loop's reconcile counters. */
export class CouchInstanceMetrics {
  private readonly phases = new Map<ObjectKey, CouchInstancePhase>();
  private readonly wakes: Counter;
  private readonly hibernations: Counter;
  private readonly replicationChecks: Counter<'result'>;

  constructor(registry: Registry) {
    const phases = this.phases;
    new Gauge({
      name: 'settee_couch_instances',
      help: 'CouchInstances by phase, as this replica last reconciled them.',
      labelNames: ['phase'],
      registers: [registry],
      collect() {
        const counts = new Map<CouchInstancePhase, number>(COUCH_INSTANCE_PHASES.map((phase) => [phase, 0]));
        for (const phase of phases.values()) counts.set(phase, (counts.get(phase) ?? 0) + 1);
        for (const [phase, count] of counts) this.set({ phase }, count);
      },
    });
    this.wakes = new Counter({
      name: 'settee_couch_wakes_total',
      help: 'Hibernated CouchInstances scaled back up (a wake request, or keepAlive turned on).',
      registers: [registry],
    });
    this.hibernations = new Counter({
      name: 'settee_couch_hibernations_total',
      help: 'CouchInstances scaled to zero after idleAfter without activity.',
      registers: [registry],
    });
    this.replicationChecks = new Counter({
      name: 'settee_couch_replication_checks_total',
      help:
        'Idle instances asked for running replication jobs before hibernating: running (kept awake), ' +
        'none, or failed (no answer; hibernated as if none ran).',
      labelNames: ['result'],
      registers: [registry],
    });
  }

  setPhase(key: ObjectKey, phase: CouchInstancePhase): void {
    this.phases.set(key, phase);
  }

  forget(key: ObjectKey): void {
    this.phases.delete(key);
  }

  countWake(): void {
    this.wakes.inc();
  }

  countHibernation(): void {
    this.hibernations.inc();
  }

  countReplicationCheck(result: ReplicationCheckResult): void {
    this.replicationChecks.inc({ result });
  }
}
