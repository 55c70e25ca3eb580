import type { V1Container } from '@kubernetes/client-node';
import type { EventRecord } from '../../kube/events.js';
import type { InterruptibleSleep } from '../../kube/controller-runtime/interruptible-sleep.js';
import type { CouchEngine } from '../couch-engine/index.js';
import type { ContainerPhase } from './pod-status.js';
import { ProbeState } from './probe-state.js';

/** How one run of a container ended. */
export interface RunEnd {
  exitCode: number;
  reason: string;
  finishedAt: Date;
}

/** What the probe loop needs of its pod worker. */
export interface ProbeLoopWorker {
  /** Interrupted when the worker stops (and by the loop itself when the engine exits). */
  waits: InterruptibleSleep;
  isStopping(): boolean;
  report(container: ContainerPhase): Promise<void>;
  event(record: EventRecord): Promise<void>;
  containerName: string;
  /** The pod's termination grace period, for a container killed by a failed probe. */
  graceMs: number;
}

/**
 * The kubelet's probe workers for one run of the container: probes tick every period from the
 * container's start (after initialDelaySeconds), so readiness lands on the first tick after the
 * engine answers, as in a cluster. The startup probe gates the others; failureThreshold failures of
 * the startup or liveness probe kill the container; readiness follows its thresholds. Resolves
 * when the container has ended (or the worker stops).
 */
export async function probeUntilEnd(options: {
  worker: ProbeLoopWorker;
  engine: CouchEngine;
  container: V1Container;
  startedAt: Date;
  podIP: string;
}): Promise<RunEnd> {
  const { worker, engine, container, startedAt, podIP } = options;
  const exited = engine.exited.then((exit) => ({
    exitCode: typeof exit === 'number' ? exit : 137,
    reason: exit === 0 ? 'Completed' : 'Error',
    finishedAt: new Date(),
  }));
  let finished: RunEnd | undefined;
  void exited.then((end) => {
    finished = end;
    worker.waits.interrupt();
  });
  const kill = async (why: string): Promise<RunEnd> => {
    await worker.event({ type: 'Warning', reason: 'Unhealthy', message: why });
    await worker.event({
      type: 'Normal',
      reason: 'Killing',
      message: `Container ${worker.containerName} failed a probe, will be restarted`,
    });
    await engine.stop(worker.graceMs);
    return exited;
  };
  const startup = container.startupProbe ? new ProbeState(container.startupProbe, startedAt) : undefined;
  const readiness = container.readinessProbe
    ? new ProbeState(container.readinessProbe, startedAt)
    : undefined;
  const liveness = container.livenessProbe ? new ProbeState(container.livenessProbe, startedAt) : undefined;
  // Ticks before the loop began found nothing listening (the container's files and the spawn, and
  // for a pod without startup or readiness probe the engine's boot: pod-worker.ts). A kubelet counts them: the
  // startup probe's (or, without one, the liveness probe's) are failures against its budget, so
  // a budget shorter than the engine's boot fails here as it would in a cluster; readiness was
  // false all along. The first tick that can pass is the first at or after now.
  const gate = startup ?? liveness;
  const now = Date.now();
  if (gate?.missTicksBefore(now) === 'failed') {
    const kind = gate === startup ? 'Startup' : 'Liveness';
    return kill(`${kind} probe failed: ${gate.lastMessage}`);
  }
  for (const probe of [startup, readiness, liveness]) if (probe !== gate) probe?.skipTicksBefore(now);
  let started = !startup;
  let ready = started && !readiness;
  await worker.report({ kind: 'running', startedAt, started, ready });
  while (!worker.isStopping() && !finished) {
    const due = [
      started ? undefined : startup,
      started ? readiness : undefined,
      started ? liveness : undefined,
    ]
      .filter((p): p is ProbeState => p !== undefined)
      .map((p) => p.nextAt)
      .reduce((a, b) => Math.min(a, b), Infinity);
    if (due === Infinity) {
      await exited;
      break;
    }
    await worker.waits.sleep(Math.max(0, due - Date.now()));
    if (worker.isStopping() || finished) break;
    const now = Date.now();
    if (!started && startup && startup.nextAt <= now) {
      const outcome = await startup.probe(container, podIP);
      if (outcome === 'passed') {
        started = true;
        readiness?.dueNow();
        liveness?.dueNow();
        if (!readiness) ready = true;
      } else if (outcome === 'failed') {
        return kill(`Startup probe failed: ${startup.lastMessage}`);
      }
    }
    if (started && readiness && readiness.nextAt <= now) {
      const outcome = await readiness.probe(container, podIP);
      if (outcome === 'passed') ready = true;
      if (outcome === 'failed') {
        if (ready)
          await worker.event({
            type: 'Warning',
            reason: 'Unhealthy',
            message: `Readiness probe failed: ${readiness.lastMessage}`,
          });
        ready = false;
      }
    }
    if (started && liveness && liveness.nextAt <= now) {
      if ((await liveness.probe(container, podIP)) === 'failed')
        return kill(`Liveness probe failed: ${liveness.lastMessage}`);
    }
    if (!worker.isStopping() && !finished)
      await worker.report({ kind: 'running', startedAt, started, ready });
  }
  return finished ?? (await exited);
}
