import type { RestartResult } from './operator-restart.js';
import { formatComponentClients, type ComponentClients } from './component-metrics.js';

/** What bench/operator-couch-instances.ts measures from the first create until all converged. */
export interface CouchInstanceApplyPhase {
  instances: number;
  /** From the first create to the moment every instance had its objects and status. */
  totalMs: number;
  /** Per instance: from its create returning to its status arriving on a watch. */
  latencyMs: { p50: number; p99: number; max: number };
  /** The old generation V8 was given (--max-old-space-size), or undefined: sized from this machine's memory. */
  operatorOldGenerationMb: number | undefined;
  operatorPeakRssMb: number;
  /** Its RSS once all converged: the caches and what else stays; the peak's excess over it is transient. */
  operatorSettledRssMb: number;
  /** The operator's CPU seconds (user + system) from the first create until all converged. */
  operatorCpuSeconds: number;
  reconciles: number;
  /**
   * Every client's requests by verb and resource, lists and watches left out: the operator's, the
   * controller-manager's and the scheduler's (the API server counts them together).
   */
  requestsByVerbAndResource: Record<string, number>;
  /** Their sum, and per reconcile: the figure earlier sessions reported as the operator's. */
  allClientRequests: number;
  allClientRequestsPerReconcile: number;
  /** What the controller-manager and the scheduler say they sent (and their client-side throttling). */
  componentClients: ComponentClients;
  /**
   * An estimate of the operator's own writes: every client's as the API server counts them, less
   * what the controller-manager's and the scheduler's clients count (their requests answered 429
   * included, which the API server's count leaves out); the API server's internal writes other than
   * endpoints and leases are not subtracted.
   */
  operatorWrites: number;
  operatorWritesPerReconcile: number;
  operatorWritesPerInstance: number;
  /** CPU seconds of each kind of process (the bench itself included) from the first create until all converged. */
  cpuSecondsByProcess: Map<string, number>;
  /** Requests the API server refused with 429 (max-requests-inflight; priority and fairness is off). */
  tooManyRequests: number;
  timeline: string[];
}

/** What the bench measures in one run: its apply phase, then its restart phase. */
export interface CouchInstanceBenchResult extends CouchInstanceApplyPhase {
  /** The restart phase (BENCH_RESTART, on unless 0): a new operator over the converged instances. */
  restart: RestartResult | undefined;
  /** From the first create until every pod of the StatefulSets existed (the restart phase waits for it). */
  podsMadeMs: number | undefined;
  /** This bench process's own peak RSS (its watch, lists and timeline), beside the operator's. */
  benchPeakRssMb: number;
}

/** The apply phase's figures as the lines the bench prints, its timeline last. */
export function formatApplyPhase(result: CouchInstanceApplyPhase): string[] {
  const lines: string[] = [];
  const print = (line: string): void => void lines.push(line);
  print(`\n== ${result.instances} CouchInstances applied at once ==`);
  print(`all with objects and status after  ${(result.totalMs / 1000).toFixed(1)} s (target < 60 s)`);
  print(
    `per instance, create -> status       p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, max ${result.latencyMs.max} ms`,
  );
  print(
    `operator peak RSS                   ${result.operatorPeakRssMb.toFixed(0)} MB (target < 256 MB at 2,000)`,
  );
  print(`operator RSS once all converged      ${result.operatorSettledRssMb.toFixed(0)} MB`);
  print(
    `operator V8 old generation          ${result.operatorOldGenerationMb === undefined ? "this machine's default" : `${result.operatorOldGenerationMb} MB, as in the chart's pod`}`,
  );
  print(`operator CPU until all converged   ${result.operatorCpuSeconds.toFixed(1)} s`);
  print(`reconciles                          ${result.reconciles}`);
  print(
    `API requests, every client          ${result.allClientRequests} (${result.allClientRequestsPerReconcile.toFixed(2)} per reconcile; the operator's, the controller-manager's, the scheduler's)`,
  );
  for (const [key, value] of Object.entries(result.requestsByVerbAndResource).sort())
    print(`  ${key.padEnd(32)} ${value}`);
  for (const line of formatComponentClients(result.componentClients)) print(line);
  print(
    `the operator's writes, estimated    ${result.operatorWrites} (${result.operatorWritesPerReconcile.toFixed(2)} per reconcile, ${result.operatorWritesPerInstance.toFixed(2)} per instance: every client's writes less the two above's client-side counts, 429s included; the API server's internal writes not subtracted)`,
  );
  print(`requests answered 429               ${result.tooManyRequests}`);
  print('CPU seconds until all converged, by process (per 1,000 instances):');
  for (const [label, seconds] of [...result.cpuSecondsByProcess].sort((a, b) => b[1] - a[1]))
    if (seconds >= 0.1)
      print(
        `  ${label.padEnd(32)} ${seconds.toFixed(1).padStart(6)} (${((seconds * 1000) / result.instances).toFixed(1)})`,
      );
  print('\ntimeline:');
  for (const line of result.timeline) print(line);
  return lines;
}

/** What the run found after its apply phase: the pods, the restart phase, the bench's own memory. */
export function formatRestartPhase(result: CouchInstanceBenchResult): string[] {
  const lines: string[] = [];
  const print = (line: string): void => void lines.push(line);
  const restart = result.restart;
  if (result.podsMadeMs !== undefined)
    print(`every StatefulSet pod made after     ${(result.podsMadeMs / 1000).toFixed(1)} s`);
  if (restart) {
    print(`\n== a new operator over the ${result.instances} converged instances ==`);
    print(
      `every instance reconciled, queue empty ${(restart.reconvergeMs / 1000).toFixed(1)} s from the new process's start (leading after ${(restart.leadMs / 1000).toFixed(1)} s)`,
    );
    print(`reconciles                          ${restart.reconciles}`);
    print(
      `writes (all but GETs, lists, watches) ${restart.writes}, the operator's, estimated, ${restart.operatorWrites} (less the controller-manager's and the scheduler's client-side counts, 429s included)`,
    );
    for (const [key, value] of Object.entries(restart.requestsByVerbAndResource).sort())
      print(`  ${key.padEnd(32)} ${value}`);
    print(`operator CPU from its start          ${restart.operatorCpuSeconds.toFixed(1)} s`);
    print(`its peak RSS                         ${restart.operatorPeakRssMb.toFixed(0)} MB`);
  }
  print(`bench process peak RSS               ${result.benchPeakRssMb.toFixed(0)} MB`);
  return lines;
}
