import type { V1Secret } from '@kubernetes/client-node';
import {
  DEFAULT_DATABASE_PORT,
  LABEL_QUEUE_BINDING,
  QueueEnvKey,
  type QueueBinding,
} from '../../api/queue-binding.js';
import { queueTargetKey, type QueueTarget } from './binding-registry.js';

function decoded(secret: V1Secret, key: string): string {
  const value = secret.data?.[key];
  return value === undefined ? '' : Buffer.from(value, 'base64').toString('utf8');
}

/**
 * What the gateway serves for a binding: its spec's connection, and the token and current signing
 * key from the env Secret the operator wrote (status.envSecret). Undefined until both exist, so a
 * binding the operator has not processed yet is simply not served (404).
 */
export function buildQueueTarget(
  binding: QueueBinding,
  envSecret: V1Secret | undefined,
): QueueTarget | undefined {
  const namespace = binding.metadata.namespace ?? '';
  const name = binding.metadata.name ?? '';
  if (!envSecret || envSecret.metadata?.labels?.[LABEL_QUEUE_BINDING] !== name) return undefined;
  const token = decoded(envSecret, QueueEnvKey.Token);
  const signingKey = decoded(envSecret, QueueEnvKey.CurrentSigningKey);
  if (token === '' || signingKey === '') return undefined;
  const { host, port, tls, db } = binding.spec.connection;
  return {
    key: queueTargetKey(namespace, name),
    namespace,
    name,
    token,
    signingKey,
    nextSigningKey: decoded(envSecret, QueueEnvKey.NextSigningKey),
    signingKeyRotation: binding.status?.signingKeys?.rotationRequest ?? '',
    connection: { host, port: port ?? DEFAULT_DATABASE_PORT, tls: tls ?? false, db: db ?? 0 },
  };
}
