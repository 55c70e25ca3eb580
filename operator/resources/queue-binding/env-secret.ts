import type { V1Secret } from '@kubernetes/client-node';
import {
  queueEnvSecretName,
  QueueEnvKey,
  type QueueBinding,
  type QueueEnv,
} from '../../../api/queue-binding.js';
import { buildQueueBindingLabels } from './labels.js';
import { buildOwnerReference } from '../owner-reference.js';

/**
 * The Secret an application loads as its environment to use the queue: exactly VQUEUE_URL,
 * VQUEUE_TOKEN, VQUEUE_CURRENT_SIGNING_KEY and VQUEUE_NEXT_SIGNING_KEY (both always set, as QStash's
 * are). `data` rather than `stringData`, so what is applied is what is stored and compared.
 */
export function buildQueueEnvSecret(binding: QueueBinding, env: QueueEnv): V1Secret {
  const name = binding.metadata.name ?? '';
  const data: Record<string, string> = {};
  for (const key of Object.values(QueueEnvKey)) data[key] = Buffer.from(env[key], 'utf8').toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: queueEnvSecretName(name),
      namespace: binding.metadata.namespace,
      labels: buildQueueBindingLabels(name),
      ownerReferences: [buildOwnerReference(binding)],
    },
    type: 'Opaque',
    data,
  };
}

/** True when `current` already holds exactly the data and labels `desired` would write. */
export function isEnvSecretUpToDate(current: V1Secret | undefined, desired: V1Secret): boolean {
  if (!current) return false;
  const sameData =
    Object.keys(current.data ?? {}).length === Object.keys(desired.data ?? {}).length &&
    Object.entries(desired.data ?? {}).every(([key, value]) => current.data?.[key] === value);
  const sameLabels = Object.entries(desired.metadata?.labels ?? {}).every(
    ([key, value]) => current.metadata?.labels?.[key] === value,
  );
  const owned =
    current.metadata?.ownerReferences?.some(
      (ref) => ref.uid === desired.metadata?.ownerReferences?.[0]?.uid,
    ) ?? false;
  return sameData && sameLabels && owned;
}
