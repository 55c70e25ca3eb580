import { CustomObjectsApi, type V1StatefulSet } from '@kubernetes/client-node';
import { GATEWAY_FIELD_MANAGER } from '../../../gateway/field-manager.js';
import { wakeScaleWriter } from '../../../gateway/proxy/wake-scale.js';
import { wakeRequestWriter, Waker } from '../../../gateway/proxy/waker.js';
import { ObjectClient } from '../../../kube/apply.js';
import { waitFor } from '../../../local/wait.js';
import { createSilentLogger } from '../../../observability/logger.js';
import { EARLY_WAKE_SCALE_GRACE_MS } from '../../../operator/controllers/couch-instance/early-wake-scale.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import {
  createInstance,
  ENGINE_START_MS,
  hasPhase,
  metricValue,
  readInstance,
  readStatefulSet,
  recordStatefulSetVersions,
  requestWake,
  useSuitePlatform,
  waitForEventReasons,
  waitForInstance,
} from '../../helpers/operator/couch-instance-harness.js';

const IDLE_AFTER = '3s';
/** Running, then idle for idleAfter, then the pod's deletion by the StatefulSet controller. */
const HIBERNATE_MS = 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The StatefulSet's versions from the first at 1 on: a scale-down after it is the operator undoing it. */
const fromScaleUp = (versions: V1StatefulSet[]) =>
  versions.slice(versions.findIndex((version) => version.spec?.replicas === 1));

/**
 * The gateway's wake with its head start (gateway/proxy/waker.ts): the wake annotation and a Scale
 * of the StatefulSet at 1, sent at once, with the real operator, StatefulSet controller and kubelet
 * stand-in. What must hold: the operator keeps the gateway's scale (it would itself scale to 1 on
 * the annotation), and a Scale that comes before the annotation, or alone, is not fought over.
 */
describe("the gateway's scale of a wake, with the operator", () => {
  const ns = useTestNamespace('couch-gw-scale');
  const platform = useSuitePlatform(ns);
  const { kubeConfig } = testControlPlane();
  const scale = wakeScaleWriter(ObjectClient.create(kubeConfig));

  async function hibernated(name: string): Promise<void> {
    await createInstance(ns.name, name, { hibernation: { idleAfter: IDLE_AFTER } });
    await waitForInstance(ns.name, name, 'phase Running', hasPhase('Running'), ENGINE_START_MS);
    await waitForInstance(ns.name, name, 'phase Hibernated', hasPhase('Hibernated'), HIBERNATE_MS);
  }

  it('when the gateway wakes a hibernated instance, then its Scale sets replicas, the operator does not undo it, and the wake is recorded as before', async () => {
    await hibernated('woken');
    const statefulSets = await recordStatefulSetVersions(ns.name, 'woken');
    const waker = new Waker({
      write: wakeRequestWriter(kubeConfig.makeApiClient(CustomObjectsApi)),
      scale,
      lookup: () => undefined,
      isWanted: () => true,
      retryIntervalMs: 1_000,
      logger: createSilentLogger(),
    });
    try {
      waker.ensureAwake(await readInstance(ns.name, 'woken'));
      await waitForInstance(ns.name, 'woken', 'phase Running', hasPhase('Running'), ENGINE_START_MS);
      const woken = fromScaleUp(statefulSets.versions);
      // The first version at 1 is the gateway's write, not the operator's.
      expect(woken[0]?.metadata?.managedFields).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            manager: GATEWAY_FIELD_MANAGER,
            operation: 'Apply',
            subresource: 'scale',
          }),
        ]),
      );
      // Up to Running, never back to 0.
      expect(woken.map((version) => version.spec?.replicas)).not.toContain(0);
    } finally {
      waker.stop();
      statefulSets.stop();
    }
    // The operator's record of the wake follows the annotation, as it did without the scale.
    await waitForEventReasons(ns.name, 'woken', ['Woken']);
    expect(await metricValue(platform.operator(), 'settee_couch_wakes_total')).toBe(1);
  }, 180_000);

  it('when the Scale lands before the wake annotation, then the operator leaves it at 1 until the annotation wakes it, and a Scale no annotation follows is undone after the grace', async () => {
    await hibernated('raced');
    const statefulSets = await recordStatefulSetVersions(ns.name, 'raced');
    try {
      await scale({ namespace: ns.name, name: 'raced' });
      // Without the grace the operator scaled it back to 0 within milliseconds of the Scale's event.
      await sleep(3_000);
      expect((await readStatefulSet(ns.name, 'raced')).spec?.replicas).toBe(1);
      await requestWake(ns.name, 'raced');
      await waitForInstance(ns.name, 'raced', 'phase Running', hasPhase('Running'), ENGINE_START_MS);
      expect(fromScaleUp(statefulSets.versions).map((version) => version.spec?.replicas)).not.toContain(0);
    } finally {
      statefulSets.stop();
    }

    // Hibernated again (idleAfter), then a Scale alone: nothing asks for a wake, so it goes back to 0.
    await waitForInstance(ns.name, 'raced', 'phase Hibernated', hasPhase('Hibernated'), HIBERNATE_MS);
    const scaledAt = Date.now();
    await scale({ namespace: ns.name, name: 'raced' });
    await waitFor(
      'the StatefulSet back at 0',
      async () => ((await readStatefulSet(ns.name, 'raced')).spec?.replicas === 0 ? true : undefined),
      { timeoutMs: EARLY_WAKE_SCALE_GRACE_MS + 30_000 },
    );
    expect(Date.now() - scaledAt).toBeGreaterThanOrEqual(EARLY_WAKE_SCALE_GRACE_MS - 1_000);
    const instance = await readInstance(ns.name, 'raced');
    expect(instance.status?.hibernatedAt).toBeDefined();
  }, 240_000);
});
