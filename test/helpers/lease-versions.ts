import { Watch } from '@kubernetes/client-node';
import { waitFor } from '../../local/wait.js';
import { testControlPlane } from './kube.js';

/** A Lease's spec as the API server sends it on a watch (times are RFC 3339 strings there). */
export interface LeaseSpecVersion {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
}

/**
 * Every version of one Lease the API server sends on a watch, in order, so that a test sees a
 * write that the next writer overwrites within milliseconds (a released Lease a standby takes at
 * once), which a read after the fact can miss.
 */
export async function recordLeaseVersions(
  namespace: string,
  name: string,
): Promise<{ versions: LeaseSpecVersion[]; stop(): void }> {
  const versions: LeaseSpecVersion[] = [];
  const controller = await new Watch(testControlPlane().kubeConfig).watch(
    `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
    { fieldSelector: `metadata.name=${name}` },
    (_type, object: { spec?: LeaseSpecVersion }) => versions.push(object.spec ?? {}),
    () => undefined,
  );
  return { versions, stop: () => controller.abort() };
}

/**
 * The versions written after `holder` last held the Lease, up to and including the first one that
 * names `successor`, once the watch has delivered it.
 */
export async function handOverVersions(
  recording: { versions: LeaseSpecVersion[] },
  holder: string,
  successor: string,
): Promise<LeaseSpecVersion[]> {
  const taken = await waitFor(
    `the watch to deliver ${successor}'s Lease`,
    async () => {
      const at = recording.versions.findIndex((v) => v.holderIdentity === successor);
      return at >= 0 ? at : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 20 },
  );
  const lastHeld = recording.versions.slice(0, taken).findLastIndex((v) => v.holderIdentity === holder);
  return recording.versions.slice(lastHeld + 1, taken + 1);
}
