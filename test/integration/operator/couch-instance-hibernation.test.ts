import { ANNOTATION_APPLIED_DIGEST } from '../../../api/well-known.js';
import { FIELD_MANAGER } from '../../../kube/apply.js';
import { waitFor } from '../../../local/wait.js';
import { useTestNamespace } from '../../helpers/kube.js';
import {
  conditionOf,
  createInstance,
  ENGINE_START_MS,
  eventsFor,
  hasPhase,
  metricValue,
  readInstance,
  readStatefulSet,
  recordInstanceVersions,
  recordStatefulSetVersions,
  renewActivity,
  requestWake,
  useSuitePlatform,
  waitForEventReasons,
  waitForInstance,
} from '../../helpers/operator/couch-instance-harness.js';

// The real StatefulSet controller makes the pods and the kubelet stand-in runs them: readiness,
// hibernation's pod deletion and the wake's new pod are what a cluster does.
const IDLE_AFTER = '3s';
/** The pod's deletion by the StatefulSet controller and the engine's stop, after idleAfter. */
const HIBERNATE_MS = 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('CouchInstance hibernation', () => {
  const ns = useTestNamespace('couch-hibernation');

  const platform = useSuitePlatform(ns);

  it('when idle past idleAfter, then it is scaled to 0, Hibernated with Active False, and an Event says so', async () => {
    const watched = await recordInstanceVersions(ns.name, 'idle');
    try {
      await createInstance(ns.name, 'idle', { hibernation: { idleAfter: IDLE_AFTER } });
      // The first start (claim, scheduling, engine, probes) may take longer than idleAfter: the idle
      // clock starts when it is Ready, so it is seen Running before it hibernates.
      await waitForInstance(ns.name, 'idle', 'phase Running', hasPhase('Running'), ENGINE_START_MS);

      const hibernated = await waitForInstance(
        ns.name,
        'idle',
        'phase Hibernated',
        hasPhase('Hibernated'),
        HIBERNATE_MS,
      );
      expect((await readStatefulSet(ns.name, 'idle')).spec?.replicas).toBe(0);
      // On the way: Hibernating while the pod terminates, too brief on a quiet machine to poll for.
      const hibernating = watched.versions.find((version) => version.status?.phase === 'Hibernating');
      expect(hibernating && conditionOf(hibernating, 'Active')).toMatchObject({
        status: 'False',
        reason: 'Hibernating',
      });
      expect(hibernated.status?.hibernatedAt).toBeDefined();
      expect(hibernated.status?.readyReplicas).toBe(0);
      expect(conditionOf(hibernated, 'Active')).toMatchObject({ status: 'False', reason: 'Hibernated' });
      expect(conditionOf(hibernated, 'Ready')).toMatchObject({ status: 'False', reason: 'Hibernated' });
      expect(conditionOf(hibernated, 'Degraded')).toMatchObject({ status: 'False' });
      // Recorded, and counted, after the status write seen above.
      await waitForEventReasons(ns.name, 'idle', ['CredentialsCreated', 'Started', 'Hibernated']);
      expect(
        await metricValue(platform.operator(), 'settee_couch_hibernations_total'),
      ).toBeGreaterThanOrEqual(1);
    } finally {
      watched.stop();
    }
  }, 150_000);

  it('when a wake is requested, then replicas is 1 and the phase Waking, then Running once ready, with a Woken Event', async () => {
    // Waking lasts until the new pod is ready, and Running until idleAfter after that: a quick
    // engine start or a slow poll can miss either, so the test reads the versions a watch saw, of
    // the StatefulSet too (a read after Running may find it scaled to 0 again).
    const watched = await recordInstanceVersions(ns.name, 'idle');
    const statefulSets = await recordStatefulSetVersions(ns.name, 'idle');
    try {
      const seen = (phase: string) =>
        waitFor(`phase ${phase}`, async () => watched.versions.find(hasPhase(phase)), {
          timeoutMs: ENGINE_START_MS,
        });
      const asleep = await readStatefulSet(ns.name, 'idle');
      await requestWake(ns.name, 'idle');
      const waking = await seen('Waking');
      // Scaled up with the Waking status.
      await waitFor(
        'the StatefulSet scaled to 1',
        async () => statefulSets.versions.find((version) => version.spec?.replicas === 1),
        { timeoutMs: 20_000 },
      );
      expect(waking.status?.hibernatedAt).toBeUndefined();
      expect(conditionOf(waking, 'Active')).toMatchObject({ status: 'True', reason: 'WakeRequested' });
      expect(conditionOf(waking, 'Progressing')).toMatchObject({ status: 'True', reason: 'Waking' });

      const running = await seen('Running');
      expect(conditionOf(running, 'Ready')).toMatchObject({ status: 'True' });
      // Every version up to one read after Running (a watch delivers each, in order).
      const { resourceVersion } = (await readStatefulSet(ns.name, 'idle')).metadata ?? {};
      await waitFor(
        `the watch to deliver the StatefulSet's version ${resourceVersion}`,
        async () =>
          statefulSets.versions.some((version) => version.metadata?.resourceVersion === resourceVersion)
            ? true
            : undefined,
        { timeoutMs: 20_000 },
      );
      // Only the replicas were written, through the scale subresource (the API server handles a
      // Scale, not the pod template), and the whole object was not applied again while it started:
      // while awake, one change of the spec, the applied digest as it was, the scale's apply owning
      // replicas.
      const awake = statefulSets.versions.filter((version) => version.spec?.replicas === 1);
      for (const version of awake)
        expect(version.metadata).toMatchObject({
          generation: (asleep.metadata?.generation ?? 0) + 1,
          annotations: {
            [ANNOTATION_APPLIED_DIGEST]: asleep.metadata?.annotations?.[ANNOTATION_APPLIED_DIGEST],
          },
          managedFields: expect.arrayContaining([
            expect.objectContaining({ manager: FIELD_MANAGER, operation: 'Apply', subresource: 'scale' }),
          ]),
        });
    } finally {
      watched.stop();
      statefulSets.stop();
    }
    // Recorded, and counted, after the Waking status write.
    await waitForEventReasons(ns.name, 'idle', ['Woken']);
    expect(await metricValue(platform.operator(), 'settee_couch_wakes_total')).toBe(1);
  }, 150_000);

  it('when the gateway keeps renewing the activity Lease, then it stays up past idleAfter, and hibernates once renewals stop', async () => {
    await createInstance(ns.name, 'busy', { hibernation: { idleAfter: IDLE_AFTER } });
    // An open continuous _changes feed at the gateway: a renewal every interval, here every 500 ms,
    // from its start until 4 s after it runs.
    await waitForInstance(ns.name, 'busy', 'phase Running', hasPhase('Running'), ENGINE_START_MS);
    for (let elapsed = 0; elapsed < 4_000; elapsed += 500) {
      await renewActivity(ns.name, 'busy');
      await sleep(500);
    }
    expect((await readInstance(ns.name, 'busy')).status?.phase).toBe('Running');
    expect((await readStatefulSet(ns.name, 'busy')).spec?.replicas).toBe(1);
    // Hibernating can be brief now that the real StatefulSet controller deletes the pod.
    await waitForInstance(
      ns.name,
      'busy',
      'phase Hibernating or Hibernated',
      (instance) => hasPhase('Hibernating')(instance) || hasPhase('Hibernated')(instance),
      20_000,
    );
  }, 120_000);

  it('when keepAlive is on for a paid instance, then it never hibernates', async () => {
    await createInstance(ns.name, 'warm', {
      plan: 'paid',
      keepAlive: true,
      hibernation: { idleAfter: '1s' },
    });
    await waitForInstance(ns.name, 'warm', 'phase Running', hasPhase('Running'), ENGINE_START_MS);
    await sleep(3_000);
    const instance = await readInstance(ns.name, 'warm');
    expect(instance.status?.phase).toBe('Running');
    expect(conditionOf(instance, 'Active')).toMatchObject({ status: 'True', reason: 'KeepAlive' });
    expect((await readStatefulSet(ns.name, 'warm')).spec?.replicas).toBe(1);
    expect((await eventsFor(ns.name, 'warm')).map((event) => event.reason)).not.toContain('Hibernated');
  }, 90_000);

  it('when its pod cannot run (pinned to a region no node has), then it is not hibernated however long past idleAfter, and Active says why', async () => {
    await createInstance(ns.name, 'nowhere', {
      plan: 'paid',
      hibernation: { idleAfter: '1s' },
      addons: { regionPinning: { region: 'nowhere-1' } },
    });
    await waitForInstance(ns.name, 'nowhere', 'phase Starting', hasPhase('Starting'));
    await sleep(3_000);
    const instance = await readInstance(ns.name, 'nowhere');
    expect(instance.status?.phase).toBe('Starting');
    expect(conditionOf(instance, 'Active')).toMatchObject({ status: 'True', reason: 'Starting' });
    expect((await readStatefulSet(ns.name, 'nowhere')).spec?.replicas).toBe(1);
    expect((await eventsFor(ns.name, 'nowhere')).map((event) => event.reason)).not.toContain('Hibernated');
  });
});
