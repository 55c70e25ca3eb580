import type { CoreV1Api } from '@kubernetes/client-node';
import { QueueBindingReason, type QueueBinding } from '../../../api/queue-binding.js';
import { callKube, isNotFound } from '../../../kube/errors.js';
import type { Blocker } from './status.js';

export type PasswordLookup = { password: string } | { problem: Blocker };

/**
 * Reads the database password from the tenant's own Secret. A direct read rather than an informer:
 * the Secret is the tenant's, unlabelled, and caching every Secret of every namespace to watch a
 * handful would cost memory and RBAC breadth. The periodic check picks up a changed password.
 */
export async function readDatabasePassword(core: CoreV1Api, binding: QueueBinding): Promise<PasswordLookup> {
  const { name, key } = binding.spec.connection.passwordSecretRef;
  const namespace = binding.metadata.namespace ?? '';
  try {
    const secret = await callKube(() => core.readNamespacedSecret({ name, namespace }));
    const encoded = secret.data?.[key];
    if (encoded === undefined) {
      return {
        problem: {
          reason: QueueBindingReason.PasswordKeyMissing,
          message: `Secret ${name} has no key ${key}`,
        },
      };
    }
    return { password: Buffer.from(encoded, 'base64').toString('utf8') };
  } catch (err) {
    if (isNotFound(err))
      return {
        problem: {
          reason: QueueBindingReason.PasswordSecretMissing,
          message: `Secret ${name} does not exist`,
        },
      };
    throw err;
  }
}
