import type { V1Secret } from '@kubernetes/client-node';
import { parseQStashDuration } from '../../../api/qstash-duration.js';
import {
  DEFAULT_DATABASE_PORT,
  DEFAULT_DEDUPLICATION_WINDOW,
  DEFAULT_DEAD_LETTER_RETENTION,
  DEFAULT_EVENT_RETENTION,
  DEFAULT_MAX_DELAY,
  DEFAULT_MAX_WORKFLOW_CONTEXT_BYTES,
  DEFAULT_MAX_WORKFLOW_STEPS,
  DEFAULT_WORKFLOW_RUN_RETENTION,
  ANNOTATION_ROTATE_SIGNING_KEYS,
  LABEL_QUEUE_BINDING,
  QueueEnvKey,
  type QueueBinding,
} from '../../../api/queue-binding.js';
import {
  QUEUE_LIMIT_DEFAULTS,
  resolveQueueLimits,
  type EffectiveQueueLimits,
} from '../../../api/queue-limits.js';
import { queueTargetKey, type QueueLimits, type QueueTarget } from '../core/binding-registry.js';

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
 * The limits the operator published in status.limits. A binding whose status has none (an
 * operator older than status.limits still runs) gets its spec.limits over the built-in defaults,
 * which are the operator's own unless its settings change them. The CRD's pattern admits only
 * durations, so the default stands in only for one too large to count in milliseconds (digits
 * beyond 2^53), which no one means.
 */
export function buildQueueLimits(binding: QueueBinding): QueueLimits {
  return toQueueLimits(
    binding.status?.limits ??
      resolveQueueLimits(binding.spec.limits, QUEUE_LIMIT_DEFAULTS, binding.spec.plan),
  );
}

/** Effective limits as the gateway uses them: durations in milliseconds. */
export function toQueueLimits(limits: EffectiveQueueLimits): QueueLimits {
  return {
    maxDelayMs: durationOr(limits.maxDelay, DEFAULT_MAX_DELAY),
    // A status written before maxTimeout existed has none: the free plan's figure.
    maxTimeoutMs: durationOr(limits.maxTimeout as string | undefined, QUEUE_LIMIT_DEFAULTS.maxTimeout),
    deduplicationWindowMs: durationOr(limits.deduplicationWindow, DEFAULT_DEDUPLICATION_WINDOW),
    deadLetterRetentionMs: durationOr(limits.deadLetterRetention, DEFAULT_DEAD_LETTER_RETENTION),
    maxDeadLetters: limits.maxDeadLetters,
    eventRetentionMs: durationOr(limits.eventRetention, DEFAULT_EVENT_RETENTION),
    maxEvents: limits.maxEvents,
    workflowRunRetentionMs: durationOr(limits.workflowRunRetention, DEFAULT_WORKFLOW_RUN_RETENTION),
    maxWorkflowRuns: limits.maxWorkflowRuns,
    // A status written before the workflow run limits existed has none: Upstash Workflow's.
    maxWorkflowSteps: (limits.maxWorkflowSteps as number | undefined) ?? DEFAULT_MAX_WORKFLOW_STEPS,
    maxWorkflowContextBytes:
      (limits.maxWorkflowContextBytes as number | undefined) ?? DEFAULT_MAX_WORKFLOW_CONTEXT_BYTES,
    maxQueues: limits.maxQueues,
    maxQueueParallelism: limits.maxQueueParallelism,
    maxSchedules: limits.maxSchedules,
    maxUrlGroups: limits.maxUrlGroups,
    maxUrlGroupEndpoints: limits.maxUrlGroupEndpoints,
    // A status written before the rate limits existed has none: none until the operator writes them.
    maxMessagesPerDay: (limits.maxMessagesPerDay as number | undefined) ?? 0,
    maxRequestsPerSecond: (limits.maxRequestsPerSecond as number | undefined) ?? 0,
  };
}

function durationOr(value: string | undefined, fallback: string): number {
  if (value === undefined) return parseQStashDuration(fallback);
  try {
    return parseQStashDuration(value);
  } catch {
    return parseQStashDuration(fallback);
  }
}
