import type { V1Secret } from '@kubernetes/client-node';
import {
  queueEnvSecretName,
  QueueEnvKey,
  type QueueBinding,
  type QueueEnv,
  type QueueEnvSource,
} from '../../../api/queue-binding.js';
import { buildQStashFormatToken, workflowUserIdOf } from '../../../api/qstash-token.js';
import { buildQueueBindingLabels } from './labels.js';
import { buildOwnerReference } from '../owner-reference.js';

/**
 * The Secret an application loads as its environment to use the queue: exactly VQUEUE_URL,
 * VQUEUE_TOKEN, VQUEUE_QSTASH_TOKEN, VQUEUE_CURRENT_SIGNING_KEY and VQUEUE_NEXT_SIGNING_KEY (both
 * always set, as QStash's are). The QStash-format token is derived here from the token and the
 * binding's user id, so the two never disagree, and an application hands it to the workflow SDK
 * as it is. `data` rather than `stringData`, so what is applied is what is stored and compared.
 */
export function buildQueueEnvSecret(binding: QueueBinding, source: QueueEnvSource): V1Secret {
  const name = binding.metadata.name ?? '';
  const userId = workflowUserIdOf({ namespace: binding.metadata.namespace ?? '', name });
  const env: QueueEnv = {
    ...source,
    [QueueEnvKey.QStashToken]: buildQStashFormatToken(userId, source.VQUEUE_TOKEN),
  };
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
