import type { V1Pod } from '@kubernetes/client-node';

/** Where an instance's CouchDB listens. `ready` is the kubelet's readiness; a not-ready one gets probed. */
export interface UpstreamAddress {
  /** `http://<pod ip>:<container port>` */
  origin: string;
  ready: boolean;
}

/**
 * A pod's CouchDB address: its IP and the first TCP port its containers declare. None while it has
 * no IP yet, once it is being deleted (terminating pods take no new requests) or once it ended.
 * Shared by the gateway (where it sends an instance's requests) and the operator (where it asks an
 * instance about its replications); see the Addresses paragraph of contract.ts.
 */
export function podAddress(pod: V1Pod): UpstreamAddress | undefined {
  const ip = pod.status?.podIP;
  const phase = pod.status?.phase;
  if (!ip || pod.metadata?.deletionTimestamp || phase === 'Succeeded' || phase === 'Failed') return undefined;
  const port = pod.spec?.containers
    .flatMap((container) => container.ports ?? [])
    .find((p) => (p.protocol ?? 'TCP') === 'TCP')?.containerPort;
  if (port === undefined) return undefined;
  const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  return { origin: `http://${ip.includes(':') ? `[${ip}]` : ip}:${port}`, ready };
}
