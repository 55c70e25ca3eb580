import { Counter, Gauge, type Registry } from 'prom-client';
import { ConditionType } from '../../../api/conditions.js';
import {
  COUCH_INSTANCE_PHASES,
  type CouchInstancePhase,
  type CouchInstanceStatus,
  type CouchInstanceUsage,
} from '../../../api/couch-instance.js';
import { parseObjectKey, type ObjectKey } from '../../../kube/controller-runtime/object-key.js';

export type ReplicationCheckResult = 'running' | 'none' | 'failed';

/** Phases an instance passes through: the time spent in one is what "stuck" alerts watch. */
const PASSING_PHASES: ReadonlySet<CouchInstancePhase> = new Set([
  'Pending',
  'Starting',
  'Waking',
  'Hibernating',
  'Restoring',
]);

interface PhaseEntry {
  phase: CouchInstancePhase;
  /** When this replica first saw the instance in it (ms since the epoch). */
  since: number;
  /** The Degraded condition's reason while it is True. */
  degraded: string | undefined;
}

/** The couch-instance controller's own metrics, beside the loop's reconcile counters. */
export class CouchInstanceMetrics {
  private readonly phases = new Map<ObjectKey, PhaseEntry>();
  private readonly usage = new Map<ObjectKey, CouchInstanceUsage>();
  private readonly wakes: Counter;
  private readonly hibernations: Counter;
  private readonly replicationChecks: Counter<'result'>;

  constructor(
    registry: Registry,
    private readonly now: () => number = Date.now,
  ) {
    const phases = this.phases;
    new Gauge({
      name: 'settee_couch_instances',
      help: 'CouchInstances by phase, as this replica last reconciled them.',
      labelNames: ['phase'],
      registers: [registry],
      collect() {
        const counts = new Map<CouchInstancePhase, number>(COUCH_INSTANCE_PHASES.map((phase) => [phase, 0]));
        for (const { phase } of phases.values()) counts.set(phase, (counts.get(phase) ?? 0) + 1);
        for (const [phase, count] of counts) this.set({ phase }, count);
      },
    });
    this.registerInstanceGauges(registry);
    this.registerUsageCounters(registry);
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

  /** The status as last written: its phase (and since when) and its Degraded condition. */
  setStatus(key: ObjectKey, status: CouchInstanceStatus): void {
    const phase = status.phase ?? 'Pending';
    const degraded = status.conditions?.find((c) => c.type === ConditionType.Degraded && c.status === 'True');
    const previous = this.phases.get(key);
    const since = previous?.phase === phase ? previous.since : this.now();
    this.phases.set(key, { phase, since, degraded: degraded?.reason });
  }

  /** The instance's status.usage as last written: what the per-instance usage counters report. */
  setUsage(key: ObjectKey, usage: CouchInstanceUsage | undefined): void {
    if (usage) this.usage.set(key, usage);
    else this.usage.delete(key);
  }

  forget(key: ObjectKey): void {
    this.phases.delete(key);
    this.usage.delete(key);
  }

  /**
   * Per instance, only while it is in a passing phase or Degraded, so the series stay few: what
   * docs/monitoring.md's alerts on stuck and degraded instances read. The time in a phase counts
   * from when this replica first saw it there (a new leader starts counting again).
   */
  private registerInstanceGauges(registry: Registry): void {
    const phases = this.phases;
    const now = this.now;
    new Gauge({
      name: 'settee_couch_instance_phase_seconds',
      help: 'Seconds an instance has been in its phase, for instances in a passing phase (Pending, Starting, Waking, Hibernating, Restoring).',
      labelNames: ['namespace', 'instance', 'phase'],
      registers: [registry],
      collect() {
        this.reset();
        const at = now();
        for (const [key, entry] of phases) {
          if (!PASSING_PHASES.has(entry.phase)) continue;
          const { namespace = '', name: instance } = parseObjectKey(key);
          this.set({ namespace, instance, phase: entry.phase }, (at - entry.since) / 1000);
        }
      },
    });
    new Gauge({
      name: 'settee_couch_instance_degraded',
      help: '1 for each instance whose Degraded condition is True, labelled with its reason.',
      labelNames: ['namespace', 'instance', 'reason'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [key, entry] of phases) {
          if (entry.degraded === undefined) continue;
          const { namespace = '', name: instance } = parseObjectKey(key);
          this.set({ namespace, instance, reason: entry.degraded }, 1);
        }
      },
    });
  }

  /**
   * Per-instance usage (docs/metering.md), labelled namespace and instance: the cumulative figures
   * of status.usage, which survive restarts and leader changes, so these counters never go back
   * (only the leader reconciles, so only it reports them). A deleted instance's series go with it.
   */
  private registerUsageCounters(registry: Registry): void {
    const usage = this.usage;
    const figures: Array<[string, string, (u: CouchInstanceUsage) => number | undefined]> = [
      [
        'settee_couch_awake_seconds_total',
        'Seconds the instance had CouchDB running (or starting).',
        (u) => u.awakeSeconds,
      ],
      [
        'settee_couch_hibernated_seconds_total',
        'Seconds the instance was hibernated.',
        (u) => u.hibernatedSeconds,
      ],
      ['settee_couch_instance_wakes_total', 'Times the instance was woken from hibernation.', (u) => u.wakes],
      [
        'settee_couch_storage_byte_hours_total',
        'Stored data integrated over time, in byte-hours.',
        (u) => u.storageByteHours,
      ],
    ];
    for (const [name, help, read] of figures) {
      new Counter({
        name,
        help,
        labelNames: ['namespace', 'instance'],
        registers: [registry],
        collect() {
          this.reset();
          for (const [key, figures] of usage) {
            const value = read(figures);
            const { namespace = '', name: instance } = parseObjectKey(key);
            if (value !== undefined && value > 0) this.inc({ namespace, instance }, value);
          }
        },
      });
    }
    const labelled = (
      name: string,
      help: string,
      label: string,
      read: (u: CouchInstanceUsage) => Record<string, number | undefined>,
    ): void => {
      new Counter({
        name,
        help,
        labelNames: ['namespace', 'instance', label],
        registers: [registry],
        collect() {
          this.reset();
          for (const [key, figures] of usage) {
            const { namespace = '', name: instance } = parseObjectKey(key);
            for (const [value, figure] of Object.entries(read(figures)))
              if (figure !== undefined && figure > 0)
                this.inc({ namespace, instance, [label]: value }, figure);
          }
        },
      });
    };
    labelled(
      'settee_couch_requests_total',
      'Requests the gateway passed on, by class (read, write, query), summed over its replicas (status.usage.requests).',
      'class',
      (u) => ({ ...u.requests }),
    );
    labelled(
      'settee_couch_body_bytes_total',
      'Body bytes through the gateway, by direction (in, out), summed over its replicas.',
      'direction',
      (u) => ({ in: u.bytesIn, out: u.bytesOut }),
    );
    labelled(
      'settee_couch_addon_seconds_total',
      'Seconds each paid add-on (keepAlive, largerStorage, backups, regionPinning) was on.',
      'addon',
      (u) => ({ ...u.addonSeconds }),
    );
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
