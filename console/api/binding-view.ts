import type { Condition } from '../../api/conditions.js';
import {
  QueueEnvKey,
  type QueueBinding,
  type QueueEnv,
  type SigningKeyStatus,
} from '../../api/queue-binding.js';
import type { Permission } from '../kube/access-review.js';
import type { EventView } from './events.js';

/** One QueueBinding as the queue list shows it. */
export interface BindingRow {
  name: string;
  /** spec.engine: what the binding declares. */
  engine: string;
  /** status.server as `valkey 8.0.1`: what the operator found the database runs; null before its first check. */
  server: string | null;
  queueUrl: string | null;
  ready: boolean;
  readyMessage: string | null;
}

/** GET .../bindings/:name: the row, where the database is, and the signing keys' generations. */
export interface BindingDetail {
  row: BindingRow;
  connection: { host: string; port: number; tls: boolean };
  signingKeys: SigningKeyStatus | null;
  conditions: Condition[];
  /** Null when the user may not read the namespace's Events. */
  events: EventView[] | null;
  permissions: { readEnv: Permission; rotate: Permission };
}

export function buildBindingRow(binding: QueueBinding): BindingRow {
  const ready = binding.status?.conditions?.find((c) => c.type === 'Ready');
  return {
    name: binding.metadata?.name ?? '',
    engine: binding.spec?.engine ?? '',
    server: binding.status?.server
      ? `${binding.status.server.engine} ${binding.status.server.version}`
      : null,
    queueUrl: binding.status?.queueUrl ?? null,
    ready: ready?.status === 'True',
    readyMessage: ready?.message ?? null,
  };
}

/**
 * The names the QStash SDK reads for the same values: `new Client()` and `new Receiver()` pick up
 * QSTASH_URL, QSTASH_TOKEN, QSTASH_CURRENT_SIGNING_KEY and QSTASH_NEXT_SIGNING_KEY by themselves.
 * QSTASH_TOKEN is the token in QStash's format, as QStash issues it: the workflow SDK's `serve()`
 * reads it from the environment, and its `context.createWebhook` needs that format.
 */
const QSTASH_NAMES: Partial<Record<QueueEnvKey, string>> = {
  [QueueEnvKey.Url]: 'QSTASH_URL',
  [QueueEnvKey.QStashToken]: 'QSTASH_TOKEN',
  [QueueEnvKey.CurrentSigningKey]: 'QSTASH_CURRENT_SIGNING_KEY',
  [QueueEnvKey.NextSigningKey]: 'QSTASH_NEXT_SIGNING_KEY',
};

/** A value as a dotenv line accepts it: double-quoted, with backslash, quote and newlines escaped. */
function dotenvValue(value: string): string {
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n').replaceAll('\r', '\\r')}"`;
}

/** The `.env` download: the VQUEUE_* values, then the same under the SDK's QSTASH_* names. */
export function renderDotenv(env: QueueEnv, binding: { namespace: string; name: string }): string {
  const keys = Object.values(QueueEnvKey);
  return [
    `# Webhook queue of QueueBinding ${binding.namespace}/${binding.name} (Settee)`,
    ...keys.map((key) => `${key}=${dotenvValue(env[key])}`),
    '# The same values under the names the QStash SDK reads',
    ...keys.flatMap((key) => {
      const name = QSTASH_NAMES[key];
      return name === undefined ? [] : [`${name}=${dotenvValue(env[key])}`];
    }),
    '',
  ].join('\n');
}
