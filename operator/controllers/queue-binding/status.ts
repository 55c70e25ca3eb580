import type { ConditionStatus } from '../../../api/conditions.js';
import {
  QueueBindingConditionType,
  QueueBindingReason,
  type QueueBindingServer,
  type QueueBindingStatus,
  type QueueEngine,
  type SigningKeyStatus,
} from '../../../api/queue-binding.js';
import { mergeConditions, type ConditionUpdate } from '../conditions.js';
import type { EffectiveQueueLimits } from '../../../api/queue-limits.js';
import type { DatabaseCheck } from './database-check.js';

/** Something that keeps the queue from being usable before the database is even tried. */
export interface Blocker {
  reason: typeof QueueBindingReason.PasswordSecretMissing | typeof QueueBindingReason.PasswordKeyMissing;
  message: string;
}

/** What one reconcile found; computeQueueBindingStatus turns it into status (pure). */
export interface QueueBindingObservation {
  generation: number | undefined;
  queueUrl: string;
  /** The env Secret's name, when it exists with current values. */
  envSecret: string | undefined;
  /** Undefined when no master secret is configured. */
  signingKeys: SigningKeyStatus | undefined;
  /** spec.limits resolved against the operator's defaults. */
  limits: EffectiveQueueLimits;
  passwordProblem: Blocker | undefined;
  /** Undefined when the password could not be read, so the database was not tried. */
  database: DatabaseCheck | undefined;
  /** spec.engine: what the binding says the database runs. */
  declaredEngine: QueueEngine;
}

/** `valkey 8.0.1`, and what spec.engine says when the server is the other engine. */
function describeServer(server: QueueBindingServer, declared: QueueEngine): string {
  const described = `${server.engine} ${server.version}`;
  return server.engine === declared ? described : `${described}, though spec.engine says ${declared}`;
}

function condition(type: string, status: ConditionStatus, reason: string, message: string): ConditionUpdate {
  return { type, status, reason, message };
}

function databaseCondition(observation: QueueBindingObservation): ConditionUpdate {
  const type = QueueBindingConditionType.DatabaseReachable;
  if (observation.passwordProblem)
    return condition(type, 'False', observation.passwordProblem.reason, observation.passwordProblem.message);
  const check = observation.database;
  if (!check)
    return condition(
      type,
      'Unknown',
      QueueBindingReason.Unreachable,
      'the database has not been checked yet',
    );
  if (check.reachable) {
    return condition(
      type,
      'True',
      QueueBindingReason.Reachable,
      `connected and authenticated (${describeServer(check.server, observation.declaredEngine)})`,
    );
  }
  return condition(type, 'False', QueueBindingReason[check.reason], check.message);
}

function readyCondition(observation: QueueBindingObservation, database: ConditionUpdate): ConditionUpdate {
  const type = QueueBindingConditionType.Ready;
  if (!observation.signingKeys) {
    return condition(
      type,
      'False',
      QueueBindingReason.SigningSecretMissing,
      'the operator has no signing master secret (SETTEE_SIGNING_MASTER_SECRET)',
    );
  }
  if (observation.passwordProblem)
    return condition(type, 'False', observation.passwordProblem.reason, observation.passwordProblem.message);
  if (database.status !== 'True') {
    return condition(
      type,
      'False',
      QueueBindingReason.DatabaseNotReachable,
      `the queue's database is not usable: ${database.message}`,
    );
  }
  return condition(
    type,
    'True',
    QueueBindingReason.QueueReady,
    `publish to ${observation.queueUrl}; credentials in Secret ${observation.envSecret}`,
  );
}

export function computeQueueBindingStatus(
  previous: QueueBindingStatus | undefined,
  observation: QueueBindingObservation,
  now: string,
): QueueBindingStatus {
  const database = databaseCondition(observation);
  const status: QueueBindingStatus = {
    queueUrl: observation.queueUrl,
    conditions: mergeConditions({
      previous: previous?.conditions,
      updates: [readyCondition(observation, database), database],
      generation: observation.generation,
      now,
    }),
  };
  const envSecret = observation.envSecret ?? previous?.envSecret;
  if (envSecret) status.envSecret = envSecret;
  const signingKeys = observation.signingKeys ?? previous?.signingKeys;
  if (signingKeys) status.signingKeys = signingKeys;
  // What the last successful check found; kept while the database cannot be reached.
  const server = observation.database?.reachable ? observation.database.server : previous?.server;
  if (server) status.server = server;
  status.limits = observation.limits;
  if (observation.generation !== undefined) status.observedGeneration = observation.generation;
  return status;
}
