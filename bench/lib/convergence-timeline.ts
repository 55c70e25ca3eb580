/**
 * A timeline of a bench that applies many objects at once: every few seconds, how many were
 * created, how many had converged, how many StatefulSets and pods the API server holds, the
 * operator's queue and memory, and each process's share of a core over the interval (the bench,
 * etcd, the API server, the controller-manager, the scheduler, the operator). The stage that is
 * slow shows as the column that lags; the process that bounds it, as the CPU it takes meanwhile.
 */
import fs from 'node:fs';
import { AppsV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { cpuBetween, cpuByProcess } from './process-tree-cpu.js';

export interface TimelineRow {
  /** Seconds since the timeline started. */
  atS: number;
  created: number;
  converged: number;
  statefulSets: number;
  pods: number;
  /** The operator's couch-instance work queue. */
  queueDepth: number;
  operatorRssMb: number;
  /** V8's heap as reserved (total) and as used by objects now (live and not yet collected). */
  operatorHeapTotalMb: number;
  operatorHeapUsedMb: number;
  /** The bench process's own RSS (its watch, lists and this timeline). */
  benchRssMb: number;
  /** Share of one core each kind of process used over the interval (100 = one core busy). */
  cpuPercent: Map<string, number>;
  /** The machine's 1-minute load average: every process's, not only the bench's. */
  load: number;
}

export interface ConvergenceTimeline {
  stop(): Promise<TimelineRow[]>;
}

export interface ConvergenceTimelineOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  intervalMs: number;
  created: () => number;
  converged: () => number;
  /** The operator's /metrics text (prom-client, prefix settee_). */
  operatorMetrics: () => Promise<string>;
}

/** How many objects a list holds, read with one item: limit=1 answers with the remaining count. */
export function countOf(list: { items: unknown[]; metadata?: { remainingItemCount?: number } }): number {
  return list.items.length + (list.metadata?.remainingItemCount ?? 0);
}

function metricValue(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(name));
  return line === undefined ? Number.NaN : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const MB = 1024 * 1024;

export function startConvergenceTimeline(options: ConvergenceTimelineOptions): ConvergenceTimeline {
  const { kubeConfig, namespace } = options;
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const apps = kubeConfig.makeApiClient(AppsV1Api);
  const rows: TimelineRow[] = [];
  const started = Date.now();
  let cpuBefore = cpuByProcess();
  let cpuAt = Date.now();
  const sample = async (): Promise<void> => {
    const [statefulSets, pods, metrics] = await Promise.all([
      apps.listNamespacedStatefulSet({ namespace, limit: 1 }).then(countOf),
      core.listNamespacedPod({ namespace, limit: 1 }).then(countOf),
      options.operatorMetrics(),
    ]);
    const cpuNow = cpuByProcess();
    const now = Date.now();
    const cpuPercent = new Map(
      [...cpuBetween(cpuBefore, cpuNow)].map(([label, ms]) => [label, (100 * ms) / (now - cpuAt)]),
    );
    cpuBefore = cpuNow;
    cpuAt = now;
    rows.push({
      atS: (now - started) / 1000,
      created: options.created(),
      converged: options.converged(),
      statefulSets,
      pods,
      queueDepth: metricValue(metrics, 'settee_workqueue_depth{controller="couch-instance"}'),
      operatorRssMb: metricValue(metrics, 'settee_process_resident_memory_bytes') / MB,
      operatorHeapTotalMb: metricValue(metrics, 'settee_nodejs_heap_size_total_bytes') / MB,
      operatorHeapUsedMb: metricValue(metrics, 'settee_nodejs_heap_size_used_bytes') / MB,
      benchRssMb: process.memoryUsage.rss() / MB,
      cpuPercent,
      load: Number(fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]),
    });
  };
  // One sample at a time: a loaded API server may take longer than the interval to answer.
  let running = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(sample).catch(() => undefined);
  }, options.intervalMs);
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
      return rows;
    },
  };
}

/** The timeline as a table, one line per sample, the busiest processes' CPU columns first. */
export function formatTimeline(rows: readonly TimelineRow[]): string[] {
  const totals = new Map<string, number>();
  for (const row of rows)
    for (const [label, percent] of row.cpuPercent) totals.set(label, (totals.get(label) ?? 0) + percent);
  const labels = [...totals]
    .filter(([, total]) => total > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([label]) => label);
  const short = (label: string): string => label.replace(/^node /, '').replace(/^kube-/, '');
  const header =
    '     s created converged   sts  pods queue | op RSS heap used MB | bench RSS | CPU % of a core: ' +
    labels.map(short).join(' / ') +
    ' | load';
  const lines = rows.map(
    (r) =>
      `${r.atS.toFixed(0).padStart(6)} ${String(r.created).padStart(7)} ${String(r.converged).padStart(9)} ` +
      `${String(r.statefulSets).padStart(5)} ${String(r.pods).padStart(5)} ${String(r.queueDepth).padStart(5)} | ` +
      `${r.operatorRssMb.toFixed(0).padStart(6)} ${r.operatorHeapTotalMb.toFixed(0).padStart(4)} ` +
      `${r.operatorHeapUsedMb.toFixed(0).padStart(4)}    | ${r.benchRssMb.toFixed(0).padStart(9)} | ` +
      labels.map((label) => (r.cpuPercent.get(label) ?? 0).toFixed(0)).join(' / ') +
      ` | ${r.load.toFixed(1)}`,
  );
  return [header, ...lines];
}
