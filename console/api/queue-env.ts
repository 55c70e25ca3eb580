import type { V1Secret } from '@kubernetes/client-node';
import { QueueEnvKey, queueEnvSecretName, type QueueEnv } from '../../api/queue-binding.js';
import type { KubeHttp } from '../kube/kube-http.js';
import type { UserRequest } from './user-context.js';

/** The binding's four VQUEUE_* values, read from its env Secret with the user's token (RBAC applies). */
export async function readQueueEnv(kube: KubeHttp, user: UserRequest, name: string): Promise<QueueEnv> {
  const secret = await kube.call<V1Secret>(user.credentials, {
    method: 'GET',
    path: `/api/v1/namespaces/${user.namespace}/secrets/${queueEnvSecretName(name)}`,
  });
  const env = {} as QueueEnv;
  for (const key of Object.values(QueueEnvKey))
    env[key] = Buffer.from(secret.data?.[key] ?? '', 'base64').toString('utf8');
  return env;
}
