import type { CoreV1Event } from '@kubernetes/client-node';
import { getFreePort } from '../../../../local/ports.js';
import { waitFor } from '../../../../local/wait.js';
import { QueueBindingEventReason } from '../../../../api/queue-binding.js';
import { loadOperatorConfig } from '../../../../operator/config.js';
import { QueueBindingReconciler } from '../../../../operator/controllers/queue-binding/reconciler.js';
import { queueBindingInformers } from '../../../../operator/controllers/queue-binding/registration.js';
import { FIELD_MANAGER } from '../../../../kube/apply.js';
import { makeKubeClients } from '../../../../kube/clients.js';
import { KubeEventRecorder } from '../../../../kube/events.js';
import { InformerFactory } from '../../../../kube/informer-factory.js';
import { createSilentLogger } from '../../../../observability/logger.js';
import type { RunningOperator } from '../../../../operator/operator.js';
import { objectKey } from '../../../../kube/controller-runtime/object-key.js';
import { testControlPlane, useTestNamespace } from '../../../helpers/kube.js';
import {
  conditionOf,
  createBinding,
  createPasswordSecret,
  eventsFor,
  readBinding,
  requestRotation,
  startQueueBindingOperator,
  TEST_MASTER_SECRET,
  waitForBinding,
} from '../../../helpers/queue/queue-binding-harness.js';
import { metricValue } from '../../../helpers/operator/couch-instance-harness.js';

/** How often an Event of `reason` was recorded: repeats of one Event bump its count. */
function occurrences(events: CoreV1Event[], reason: string): number {
  return events.filter((e) => e.reason === reason).reduce((sum, e) => sum + (e.count ?? 1), 0);
}

const spec = (secret: string, port: number) => ({
  engine: 'valkey' as const,
  connection: { host: '127.0.0.1', port, passwordSecretRef: { name: secret, key: 'password' } },
});

/**
 * The QueueBinding reconciler against a cache that has not caught up with its own writes: the
 * informers list once and are stopped, so their caches stay where a lagging watch would leave
 * them, and two passes run back to back on them.
 */
describe('the QueueBinding reconciler reading its own writes', () => {
  const ns = useTestNamespace('queue-own-writes');
  const logger = createSilentLogger();
  let informers: InformerFactory;

  afterAll(() => informers?.stopAll());

  it('when a pass follows its own rotation before the watch delivers it, then the keys are rotated once', async () => {
    const plane = testControlPlane();
    // Nothing listens there: the database check fails fast, which this test does not look at.
    await createPasswordSecret(ns.name, 'lagging-auth', 'x');
    await createBinding(ns.name, 'lagging', spec('lagging-auth', await getFreePort()));
    await requestRotation(ns.name, 'lagging', '2030-01-01T00:00:00Z');

    informers = new InformerFactory({ kubeConfig: plane.kubeConfig, namespace: ns.name, logger });
    const watched = queueBindingInformers(informers);
    informers.startAll();
    await informers.waitForSync();
    await informers.stopAll();
    expect(watched.bindings.get({ namespace: ns.name, name: 'lagging' })?.status).toBeUndefined();

    const clients = makeKubeClients(plane.kubeConfig);
    const config = loadOperatorConfig({
      SETTEE_WATCH_NAMESPACE: ns.name,
      SETTEE_SIGNING_MASTER_SECRET: TEST_MASTER_SECRET,
    }).queueBinding;
    let now = new Date();
    const reconciler = new QueueBindingReconciler({
      informers: watched,
      clients,
      events: new KubeEventRecorder({
        core: clients.core,
        component: FIELD_MANAGER,
        instance: 'test',
        logger,
      }),
      config,
      now: () => now,
    });
    const ctx = { logger, signal: new AbortController().signal, failures: 0 };
    const key = objectKey({ namespace: ns.name, name: 'lagging' });

    await reconciler.reconcile(key, ctx);
    const rotated = (await readBinding(ns.name, 'lagging')).status?.signingKeys;
    expect(rotated).toEqual({
      currentGeneration: 1,
      nextGeneration: 2,
      rotationRequest: '2030-01-01T00:00:00Z',
    });
    now = new Date(now.getTime() + 5_000);
    await reconciler.reconcile(key, ctx);

    expect((await readBinding(ns.name, 'lagging')).status?.signingKeys).toEqual(rotated);
    const events = await eventsFor(ns.name, 'lagging');
    expect(occurrences(events, QueueBindingEventReason.SigningKeyRotated)).toBe(1);
    expect(occurrences(events, QueueBindingEventReason.EnvSecretCreated)).toBe(1);
  });
});

describe('a QueueBinding while the operator has no signing master secret', () => {
  const ns = useTestNamespace('queue-no-signing');
  let operator: RunningOperator;

  beforeAll(async () => {
    // Empty is unset; the harness checks every 300 ms.
    operator = await startQueueBindingOperator({
      namespace: ns.name,
      env: { SETTEE_SIGNING_MASTER_SECRET: '' },
    });
  });
  afterAll(() => operator?.stop());

  it('when several periodic checks pass, then SigningSecretMissing is recorded once', async () => {
    await createPasswordSecret(ns.name, 'unsigned-auth', 'x');
    await createBinding(ns.name, 'unsigned', spec('unsigned-auth', await getFreePort()));
    await waitForBinding(
      ns.name,
      'unsigned',
      'Ready False for the missing secret',
      (b) => conditionOf(b, 'Ready')?.reason === 'SigningSecretMissing',
    );
    const passes = 'settee_reconcile_total{controller="queue-binding",outcome="requeue"}';
    const passesBefore = await metricValue(operator, passes);
    await waitFor(
      'five more periodic checks',
      async () => ((await metricValue(operator, passes)) >= passesBefore + 5 ? true : undefined),
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    const events = await eventsFor(ns.name, 'unsigned');
    expect(occurrences(events, QueueBindingEventReason.SigningSecretMissing)).toBe(1);
  });
});
