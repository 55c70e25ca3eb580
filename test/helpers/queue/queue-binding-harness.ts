import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type CoreV1Event,
} from '@kubernetes/client-node';
import { waitFor } from '../../../local/wait.js';
import {
  ANNOTATION_ROTATE_SIGNING_KEYS,
  QUEUE_BINDING_KIND,
  QUEUE_BINDING_PLURAL,
  queueEnvSecretName,
  type QueueBinding,
  type QueueBindingSpec,
  type QueueBindingStatus,
  type QueueEnv,
} from '../../../api/queue-binding.js';
import { loadOperatorConfig } from '../../../operator/config.js';
import { queueBindingController } from '../../../operator/controllers/queue-binding/registration.js';
import { createSilentLogger } from '../../../observability/logger.js';
import { startOperator, type RunningOperator } from '../../../operator/operator.js';
import { customObjectHelpers } from '../custom-objects.js';
import { waitForEventsWithReasons } from '../events-with-reasons.js';
import { testControlPlane } from '../kube.js';

export { conditionOf } from '../custom-objects.js';

export const TEST_MASTER_SECRET = 'test-master-secret-0123456789abcdef';

const bindings = customObjectHelpers<QueueBinding, QueueBindingSpec>({
  kind: QUEUE_BINDING_KIND,
  plural: QUEUE_BINDING_PLURAL,
  defaultTimeoutMs: 15_000,
});

export const createBinding = bindings.create;
export const readBinding = bindings.read;
export const waitForBinding = bindings.waitFor;
export const mergePatchBinding = bindings.mergePatch;

function core(): CoreV1Api {
  return testControlPlane().kubeConfig.makeApiClient(CoreV1Api);
}

/** The operator with only the QueueBinding controller, watching one namespace, with short intervals. */
export async function startQueueBindingOperator(options: {
  namespace: string;
  env?: Record<string, string>;
}): Promise<RunningOperator> {
  const config = loadOperatorConfig({
    SETTEE_WATCH_NAMESPACE: options.namespace,
    SETTEE_METRICS_PORT: '0',
    SETTEE_LEADER_ELECTION: 'false',
    SETTEE_SIGNING_MASTER_SECRET: TEST_MASTER_SECRET,
    SETTEE_QUEUE_BASE_URL: 'http://127.0.0.1:8080',
    SETTEE_QUEUE_CHECK_INTERVAL: '300ms',
    SETTEE_QUEUE_DATABASE_TIMEOUT: '1s',
    ...options.env,
  });
  return startOperator({
    config,
    kubeConfig: testControlPlane().kubeConfig,
    logger: createSilentLogger(),
    controllers: [queueBindingController],
  });
}

export async function createPasswordSecret(
  namespace: string,
  name: string,
  password: string,
  key = 'password',
): Promise<void> {
  await core().createNamespacedSecret({
    namespace,
    body: { metadata: { name, namespace }, stringData: { [key]: password } },
  });
}

export async function replacePasswordSecret(
  namespace: string,
  name: string,
  password: string,
  key = 'password',
): Promise<void> {
  await core().replaceNamespacedSecret({
    name,
    namespace,
    body: { metadata: { name, namespace }, stringData: { [key]: password } },
  });
}

export async function requestRotation(namespace: string, name: string, value: string): Promise<void> {
  await bindings.mergePatch(namespace, name, {
    metadata: { annotations: { [ANNOTATION_ROTATE_SIGNING_KEYS]: value } },
  });
}

/** Writes a binding's status as another writer (an older operator, say) left it. */
export async function writeBindingStatus(
  namespace: string,
  name: string,
  status: QueueBindingStatus,
): Promise<void> {
  await testControlPlane()
    .kubeConfig.makeApiClient(CustomObjectsApi)
    .patchNamespacedCustomObjectStatus(
      { ...bindings.api(namespace), name, body: { status } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
}

/** The env Secret's data, decoded; undefined while it does not exist. */
export async function readQueueEnv(
  namespace: string,
  binding: string,
): Promise<Record<string, string> | undefined> {
  try {
    const secret = await core().readNamespacedSecret({
      name: queueEnvSecretName(binding),
      namespace,
    });
    return Object.fromEntries(
      Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
    );
  } catch {
    return undefined;
  }
}

export function waitForQueueEnv(
  namespace: string,
  binding: string,
  what: string,
  check: (env: QueueEnv) => boolean,
): Promise<QueueEnv> {
  return waitFor(
    `the env Secret of ${namespace}/${binding}: ${what}`,
    async () => {
      const env = (await readQueueEnv(namespace, binding)) as QueueEnv | undefined;
      return env && check(env) ? env : undefined;
    },
    { timeoutMs: 15_000, intervalMs: 100 },
  );
}

export async function eventsFor(namespace: string, name: string): Promise<CoreV1Event[]> {
  const events = await core().listNamespacedEvent({
    namespace,
    fieldSelector: `involvedObject.name=${name}`,
  });
  return events.items;
}

/** The binding's Events once every one of `reasons` is among them (recorded after the status). */
export function waitForEventReasons(
  namespace: string,
  name: string,
  reasons: readonly string[],
): Promise<CoreV1Event[]> {
  return waitForEventsWithReasons(`${namespace}/${name}`, () => eventsFor(namespace, name), reasons);
}
