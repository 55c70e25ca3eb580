import net from 'node:net';
import type { V1Container, V1Probe } from '@kubernetes/client-node';

export type ProbeResult = { ok: true } | { ok: false; message: string };

/** The kubelet's defaults for a probe's fields. */
export function probeTiming(probe: V1Probe): {
  initialDelayMs: number;
  periodMs: number;
  timeoutMs: number;
  failureThreshold: number;
  successThreshold: number;
} {
  return {
    initialDelayMs: (probe.initialDelaySeconds ?? 0) * 1000,
    periodMs: (probe.periodSeconds ?? 10) * 1000,
    timeoutMs: (probe.timeoutSeconds ?? 1) * 1000,
    failureThreshold: probe.failureThreshold ?? 3,
    successThreshold: probe.successThreshold ?? 1,
  };
}

/**
 * Runs one probe against the pod's address as a kubelet does: httpGet succeeds on a status in
 * 200..399, tcpSocket on a connection. exec and grpc need a container to run in, which the
 * stand-in does not have, so they fail and say why.
 */
export async function runProbe(probe: V1Probe, container: V1Container, podIP: string): Promise<ProbeResult> {
  const { timeoutMs } = probeTiming(probe);
  try {
    if (probe.httpGet) {
      const port = resolvePort(probe.httpGet.port, container);
      const scheme = (probe.httpGet.scheme ?? 'HTTP').toLowerCase();
      const host = probe.httpGet.host ?? podIP;
      const headers = Object.fromEntries((probe.httpGet.httpHeaders ?? []).map((h) => [h.name, h.value]));
      const response = await fetch(`${scheme}://${host}:${port}${probe.httpGet.path ?? '/'}`, {
        headers,
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.body?.cancel();
      return response.status >= 200 && response.status < 400
        ? { ok: true }
        : { ok: false, message: `HTTP probe failed with statuscode: ${response.status}` };
    }
    if (probe.tcpSocket) {
      const port = resolvePort(probe.tcpSocket.port, container);
      await connect(probe.tcpSocket.host ?? podIP, port, timeoutMs);
      return { ok: true };
    }
    return {
      ok: false,
      message: 'the kubelet stand-in runs httpGet and tcpSocket probes only (no container to exec in)',
    };
  } catch (err) {
    return { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
}

function resolvePort(port: number | string | object, container: V1Container): number {
  if (typeof port === 'number') return port;
  const named = container.ports?.find((p) => p.name === port)?.containerPort;
  if (named !== undefined) return named;
  const numeric = Number(port);
  if (Number.isInteger(numeric)) return numeric;
  throw new Error(`the container has no port named ${String(port)}`);
}

function connect(host: string, port: number, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port, timeout: timeoutMs });
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('timeout', () => socket.destroy(new Error(`dial tcp ${host}:${port}: i/o timeout`)));
    socket.once('error', reject);
  });
}
