import type { V1Secret } from '@kubernetes/client-node';
import { parseQStashDuration } from '../../../api/qstash-duration.js';
import {
  DEFAULT_DATABASE_PORT,
  DEFAULT_DEDUPLICATION_WINDOW,
  DEFAULT_DEAD_LETTER_RETENTION,
  DEFAULT_EVENT_RETENTION,
  DEFAULT_MAX_EVENTS,
  DEFAULT_MAX_DELAY,
  ANNOTATION_ROTATE_SIGNING_KEYS,
  LABEL_QUEUE_BINDING,
  QueueEnvKey,
  type QueueBinding,
} from '../../../api/queue-binding.js';
import { queueTargetKey, type QueueLimits, type QueueTarget } from './binding-registry.js';

function decoded(secret: V1Secret, key: string): string {
  const value = secret.data?.[key];
  return value === undefined ? '' : Buffer.from(value, 'base64').toString('utf8');
}

/**
 * What the gateway serves for a binding: its spec's connection, and the token and both signing
 * keys from the env Secret the operator wrote (status.envSecret). Undefined until both exist, so a
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
    requestedSigningKeyRotation: binding.metadata.annotations?.[ANNOTATION_ROTATE_SIGNING_KEYS] ?? '',
    connection: { host, port: port ?? DEFAULT_DATABASE_PORT, tls: tls ?? false, db: db ?? 0 },
    limits: buildQueueLimits(binding),
  };
}

/**
 * The CRD's pattern admits only durations, so the default stands in only for one too large to
 * count in milliseconds (digits beyond 2^53), which no one means.
 */
export function buildQueueLimits(binding: QueueBinding): QueueLimits {
  const limits = binding.spec.limits;
  const result: QueueLimits = {
    maxDelayMs: durationOr(limits?.maxDelay, DEFAULT_MAX_DELAY),
    deduplicationWindowMs: durationOr(limits?.deduplicationWindow, DEFAULT_DEDUPLICATION_WINDOW),
    deadLetterRetentionMs: durationOr(limits?.deadLetterRetention, DEFAULT_DEAD_LETTER_RETENTION),
    eventRetentionMs: durationOr(limits?.eventRetention, DEFAULT_EVENT_RETENTION),
    maxEvents: limits?.maxEvents ?? DEFAULT_MAX_EVENTS,
  };
  if (limits?.maxDeadLetters !== undefined) result.maxDeadLetters = limits.maxDeadLetters;
  if (limits?.maxQueues !== undefined) result.maxQueues = limits.maxQueues;
  if (limits?.maxQueueParallelism !== undefined) result.maxQueueParallelism = limits.maxQueueParallelism;
  if (limits?.maxSchedules !== undefined) result.maxSchedules = limits.maxSchedules;
  if (limits?.maxUrlGroups !== undefined) result.maxUrlGroups = limits.maxUrlGroups;
  if (limits?.maxUrlGroupEndpoints !== undefined) result.maxUrlGroupEndpoints = limits.maxUrlGroupEndpoints;
  return result;
}

function durationOr(value: string | undefined, fallback: string): number {
  try {
    return parseQStashDuration(value ?? fallback);
  } catch {
    return parseQStashDuration(fallback);
  }
}
