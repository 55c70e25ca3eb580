import type { V1Container, V1Probe } from '@kubernetes/client-node';

/** The kubelet's default probe period when a probe leaves periodSeconds out. */
const DEFAULT_PERIOD_SECONDS = 10;

/**
 * When a kubelet would first report the container Ready, given when it started and when the engine
 * first answered: at the first tick of the probe that gates readiness (the startup probe when there
 * is one, otherwise the readiness probe) at or after the answer, ticks falling every periodSeconds
 * from initialDelaySeconds. The readiness probe that follows a startup success is taken to pass at
 * that same tick. Without either probe the kubelet reports Ready as soon as the container runs.
 *
 * The stand-in keeps to this schedule, rather than reporting Ready the moment the engine answers,
 * so that the local platform puts the probe period where a cluster puts it: off the gateway's wake
 * path (the gateway probes /_up itself) but on everything that waits for the pod to be Ready.
 */
export function readyReportedAt(
  container: V1Container | undefined,
  startedAt: number,
  answeredAt: number,
): number {
  const probe: V1Probe | undefined = container?.startupProbe ?? container?.readinessProbe;
  if (!probe) return answeredAt;
  const firstTick = startedAt + (probe.initialDelaySeconds ?? 0) * 1000;
  if (answeredAt <= firstTick) return firstTick;
  const periodMs = (probe.periodSeconds ?? DEFAULT_PERIOD_SECONDS) * 1000;
  return firstTick + Math.ceil((answeredAt - firstTick) / periodMs) * periodMs;
}
