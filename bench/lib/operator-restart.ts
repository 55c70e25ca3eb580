import type { KubeConfig } from '@kubernetes/client-node';
import type { ManagedProcess } from '../../local/process.js';
import { waitFor } from '../../local/wait.js';
import { callsBetween } from '../../test/helpers/calls-between.js';
import { apiserverRequestCounts } from '../../test/helpers/kube/apiserver-requests.js';
import { peakRssMb } from './proc-memory.js';
import { cpuSeconds } from './process-usage.js';

export interface RestartResult {
  /** From the new process's start (its spawn) to every instance reconciled and its queue empty. */
  reconvergeMs: number;
  /** Of that, from its start to its leading (its metrics answering settee_leader 1, polled every 200 ms). */
  leadMs: number;
  reconciles: number;
  /** Requests the API server answered meanwhile, by verb and resource, lists and watches left out. */
  requestsByVerbAndResource: Record<string, number>;
  /** Of those, the writes (server-side applies, creates, patches, updates, deletes). */
  writes: number;
  /** Of the writes, an estimate of the operator's: less what the controller-manager's and the scheduler's clients count (429s included). */
  operatorWrites: number;
  /** All the new process's CPU, from its start: its start-up and informers' lists included. */
  operatorCpuSeconds: number;
  operatorPeakRssMb: number;
}

/**
 * Lists and watches are the informers' own streams; endpoints and leases are the API server's (the
 * `kubernetes` Service, its identity Lease; the bench's operator runs without leader election).
 */
const NOT_ASKED = /^(LIST|WATCH) |endpoints$|leases$|^429$/;
const READS = /^GET /;

/**
 * The restart phase: the converged operator is stopped and a new one started over the same
 * instances, as a rollout or a crash does; what the new one sends until it has reconciled each
 * instance once and has nothing queued. Each instance found applied by the operator with the
 * content its builders produce is not applied again (owned-objects.ts), so the writes are those of
 * what changed while no operator ran.
 */
export async function measureRestart(options: {
  kubeConfig: KubeConfig;
  instances: number;
  /** Stops the running operator. */
  stop: () => Promise<void>;
  /**
   * Starts a new one; resolves once it leads. The phase is timed from this call, as a rollout's
   * new pod is: the start-up, the informers' lists and the leading are part of a restart's cost.
   */
  start: () => Promise<ManagedProcess>;
  /** The sum of an operator metric's samples whose line starts with `prefix`. */
  metric: (prefix: string) => Promise<number>;
  timeoutMs: number;
  /** The writes the controller-manager and the scheduler say they have sent so far (component-metrics.ts). */
  componentWrites: () => Promise<number>;
}): Promise<RestartResult> {
  const { kubeConfig, instances, metric } = options;
  const before = await apiserverRequestCounts(kubeConfig);
  const componentWritesBefore = await options.componentWrites();
  await options.stop();
  const started = Date.now();
  const operator = await options.start();
  const leadMs = Date.now() - started;
  const reconciles = await waitFor(
    'the restarted operator to reconcile every instance',
    async () => {
      const done = await metric('settee_reconcile_total{controller="couch-instance"');
      const queued = await metric('settee_workqueue_depth{controller="couch-instance"}');
      return done >= instances && queued === 0 ? done : undefined;
    },
    { timeoutMs: options.timeoutMs, intervalMs: 200, abort: operator.exited },
  );
  const reconvergeMs = Date.now() - started;
  // A new process: all its CPU is the restart's.
  const operatorCpuSeconds = cpuSeconds(operator.pid);
  const requests = callsBetween(before, await apiserverRequestCounts(kubeConfig), NOT_ASKED);
  const writes = [...requests].filter(([key]) => !READS.test(key)).reduce((sum, [, n]) => sum + n, 0);
  return {
    reconvergeMs,
    leadMs,
    reconciles,
    requestsByVerbAndResource: Object.fromEntries(requests),
    writes,
    operatorWrites: writes - ((await options.componentWrites()) - componentWritesBefore),
    operatorCpuSeconds,
    operatorPeakRssMb: await peakRssMb(operator.pid),
  };
}
