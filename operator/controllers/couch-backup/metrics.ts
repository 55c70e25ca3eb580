import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export type BackupResultLabel = 'completed' | 'failed' | 'skipped';

interface LastGood {
  completedAt: number;
  size: number;
}

/** The backups' metrics: runs by result, how long they took, and per instance the last good one. */
export class BackupMetrics {
  private readonly lastGood = new Map<string, LastGood>();
  private readonly runs: Counter<'result'>;
  private readonly duration: Histogram<'result'>;

  constructor(registry: Registry, now: () => Date = () => new Date()) {
    const lastGood = this.lastGood;
    const split = (key: string): { namespace: string; instance: string } => {
      const [namespace = '', instance = ''] = key.split('/');
      return { namespace, instance };
    };
    this.runs = new Counter({
      name: 'settee_backups_total',
      help: 'Backups by result: completed, failed (after every attempt), skipped (hibernated and unchanged).',
      labelNames: ['result'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'settee_backup_duration_seconds',
      help: 'How long a backup took, from reading the instance to the manifest written.',
      labelNames: ['result'],
      buckets: [1, 5, 15, 60, 300, 900, 3600],
      registers: [registry],
    });
    new Gauge({
      name: 'settee_backup_last_size_bytes',
      help: "Compressed size of each instance's newest completed backup.",
      labelNames: ['namespace', 'instance'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [key, good] of lastGood) this.set(split(key), good.size);
      },
    });
    new Gauge({
      name: 'settee_backup_last_success_age_seconds',
      help: "Seconds since each instance's newest completed backup ended (alert when above twice the schedule's period).",
      labelNames: ['namespace', 'instance'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [key, good] of lastGood) this.set(split(key), (now().getTime() - good.completedAt) / 1000);
      },
    });
  }

  countRun(result: BackupResultLabel, seconds?: number): void {
    this.runs.inc({ result });
    if (seconds !== undefined) this.duration.observe({ result }, seconds);
  }

  /** `instanceKey` is `namespace/name`; a newer completion replaces an older one. */
  recordGood(instanceKey: string, completedAt: string, size: number): void {
    const time = Date.parse(completedAt);
    const previous = this.lastGood.get(instanceKey);
    if (!previous || previous.completedAt <= time)
      this.lastGood.set(instanceKey, { completedAt: time, size });
  }

  forgetInstance(instanceKey: string): void {
    this.lastGood.delete(instanceKey);
  }
}
