import { CoreV1Api, type KubernetesObject, type V1ConfigMap } from '@kubernetes/client-node';
import { waitFor } from '../../../../local/wait.js';
import { InformerFactory } from '../../../../kube/informer-factory.js';
import type { Informer } from '../../../../kube/informer.js';
import { createSilentLogger } from '../../../../observability/logger.js';
import { createOperatorMetrics } from '../../../../observability/metrics.js';
import { Controller } from '../../../../kube/controller-runtime/controller.js';
import { ownerKeys, ownKey } from '../../../../kube/controller-runtime/key-mappers.js';
import { parseObjectKey, type ObjectKey } from '../../../../kube/controller-runtime/object-key.js';
import { isSpecOrMetadataChange } from '../../../../kube/controller-runtime/predicates.js';
import {
  DONE,
  requeueAfter,
  type ReconcileContext,
  type ReconcileResult,
} from '../../../../kube/controller-runtime/reconciler.js';
import { testControlPlane, useTestNamespace } from '../../../helpers/kube.js';

const namespace = useTestNamespace('controller');
/**
 * A change through the API server, its watch event and the reconcile it queues: well under a second
 * on a quiet machine, seconds when etcd and the API server share a loaded CI machine's two cores.
 */
const ROUND_TRIP_MS = 15_000;

type Behaviour = (key: ObjectKey, ctx: ReconcileContext, call: number) => Promise<ReconcileResult>;

/** A reconciler whose behaviour each test sets, recording every call. */
class RecordingReconciler {
  readonly calls: { key: ObjectKey; at: number; failures: number }[] = [];
  readonly inFlight = new Set<ObjectKey>();
  overlaps = 0;
  behaviour: Behaviour = async () => DONE;

  async reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> {
    if (this.inFlight.has(key)) this.overlaps += 1;
    this.inFlight.add(key);
    const call = this.calls.filter((c) => c.key === key).length;
    this.calls.push({ key, at: Date.now(), failures: ctx.failures });
    try {
      return await this.behaviour(key, ctx, call);
    } finally {
      this.inFlight.delete(key);
    }
  }

  callsFor(key: ObjectKey) {
    return this.calls.filter((c) => c.key === key);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Controller', () => {
  const core = () => testControlPlane().kubeConfig.makeApiClient(CoreV1Api);
  let informers: InformerFactory;
  let controller: Controller;
  let reconciler: RecordingReconciler;
  let metrics: ReturnType<typeof createOperatorMetrics>;
  let parentInformer: Informer<V1ConfigMap>;
  let test = 0;
  let group = '';
  let prefix = '';

  const key = (name: string) => `${namespace.name}/${prefix}${name}`;
  const putConfigMap = (name: string, data: Record<string, string>, labels?: Record<string, string>) =>
    core().createNamespacedConfigMap({
      namespace: namespace.name,
      body: { metadata: { name: prefix + name, labels }, data },
    });
  const annotate = (name: string, value: string) =>
    core().patchNamespacedConfigMap({
      namespace: namespace.name,
      name: prefix + name,
      body: [{ op: 'add', path: '/metadata/annotations', value: { touch: value } }],
    });

  beforeEach(async () => {
    group = `t${++test}`;
    prefix = `${group}-`;
    reconciler = new RecordingReconciler();
    metrics = createOperatorMetrics({ defaultMetrics: false });
    informers = new InformerFactory({
      kubeConfig: testControlPlane().kubeConfig,
      namespace: namespace.name,
      logger: createSilentLogger(),
    });
    const parents = (parentInformer = informers.informerFor<V1ConfigMap>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      plural: 'configmaps',
      labelSelector: `test=${group}`,
    }));
    const children = informers.informerFor<KubernetesObject>({
      apiVersion: 'v1',
      kind: 'Secret',
      plural: 'secrets',
      labelSelector: 'settee.dev/instance',
    });
    controller = new Controller({
      name: 'test',
      reconciler,
      primary: parents,
      watches: [
        { informer: parents, toKeys: ownKey, updatePredicate: isSpecOrMetadataChange },
        {
          informer: children,
          toKeys: ownerKeys({ apiVersion: 'v1', kind: 'ConfigMap' }),
          // Stands for RecentWrites.isWrittenVersion: Secrets named own-* are "this controller's writes".
          isOwnWrite: (object) => object.metadata?.name?.startsWith(`${prefix}own-`) ?? false,
        },
      ],
      workers: 4,
      resyncPeriodMs: 0,
      // The cap is far above the first delays (100, 200, 400 ms) so that a key that was not
      // forgotten after success would wait 800 ms, far from the base 100 ms (a 700 ms margin for a late timer).
      backoff: { baseMs: 100, maxMs: 5_000 },
      logger: createSilentLogger(),
      metrics,
    });
  });

  afterEach(async () => {
    await controller.stop();
    await informers.stopAll();
  });

  async function run(): Promise<void> {
    informers.startAll();
    await informers.waitForSync();
    controller.start();
  }

  const parent = (name: string, data: Record<string, string> = { v: '1' }) =>
    putConfigMap(name, data, { test: group });

  it('when started, then every existing object is reconciled once, and a change reconciles its key again', async () => {
    await Promise.all(['a', 'b', 'c'].map((name) => parent(name)));
    await run();
    await waitFor('three reconciles', async () => (reconciler.calls.length >= 3 ? true : undefined), {
      timeoutMs: ROUND_TRIP_MS,
    });
    await annotate('b', 'x');
    await waitFor('b again', async () => (reconciler.callsFor(key('b')).length === 2 ? true : undefined), {
      timeoutMs: ROUND_TRIP_MS,
    });
    // The change came after the whole first list: a second reconcile of a or c would have run first.
    expect(reconciler.calls.map((c) => c.key).sort()).toEqual([key('a'), key('b'), key('b'), key('c')]);
  });

  it('when an owned object changes, then its owner is reconciled', async () => {
    await parent('owner');
    await run();
    await waitFor('the first reconcile', async () => (reconciler.calls.length >= 1 ? true : undefined), {
      timeoutMs: ROUND_TRIP_MS,
    });
    await core().createNamespacedSecret({
      namespace: namespace.name,
      body: {
        metadata: { name: `${prefix}owned`, labels: { 'settee.dev/instance': `${prefix}owner` } },
        stringData: { k: 'v' },
      },
    });
    await waitFor(
      'owner reconciled for its Secret',
      async () => (reconciler.callsFor(key('owner')).length === 2 ? true : undefined),
      {
        timeoutMs: ROUND_TRIP_MS,
      },
    );
  });

  it('when an owned object is the controller’s own write, then its add and update wake no reconcile, and its delete does', async () => {
    await Promise.all([parent('quiet'), parent('woken')]);
    await run();
    await waitFor('the first reconciles', async () => (reconciler.calls.length >= 2 ? true : undefined), {
      timeoutMs: ROUND_TRIP_MS,
    });
    const secret = (name: string, owner: string) => ({
      metadata: { name: prefix + name, labels: { 'settee.dev/instance': prefix + owner } },
      stringData: { k: 'v' },
    });
    await core().createNamespacedSecret({ namespace: namespace.name, body: secret('own-1', 'quiet') });
    await core().replaceNamespacedSecret({
      namespace: namespace.name,
      name: `${prefix}own-1`,
      body: { ...secret('own-1', 'quiet'), stringData: { k: 'changed' } },
    });
    // One watch delivers the Secrets' events in order: once this one's reconcile ran, the own
    // write's events were handled before it.
    await core().createNamespacedSecret({ namespace: namespace.name, body: secret('other', 'woken') });
    await waitFor(
      'the owner of the other Secret reconciled',
      async () => (reconciler.callsFor(key('woken')).length >= 2 ? true : undefined),
      { timeoutMs: ROUND_TRIP_MS },
    );
    expect(reconciler.callsFor(key('quiet'))).toHaveLength(1);
    await core().deleteNamespacedSecret({ namespace: namespace.name, name: `${prefix}own-1` });
    await waitFor(
      'the owner reconciled for its deleted Secret',
      async () => (reconciler.callsFor(key('quiet')).length >= 2 ? true : undefined),
      { timeoutMs: ROUND_TRIP_MS },
    );
  });

  it('when one object changes in a burst while its reconcile is slow, then reconciles of it never overlap and the burst collapses', async () => {
    await parent('busy');
    // The burst's first reconcile is held until the informer has delivered the whole burst, so
    // every later change of the burst arrives while it runs, whatever the machine's load.
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    reconciler.behaviour = async (_key, _ctx, call) => {
      if (call === 1) await held;
      return DONE;
    };
    let burstDelivered = false;
    parentInformer.onEvent((event) => {
      if (event.object.metadata?.name === `${prefix}busy` && event.object.metadata.annotations?.touch === '9')
        burstDelivered = true;
    });
    let whileHeld = 0;
    try {
      await run();
      await waitFor(
        'the initial reconcile',
        async () => (reconciler.callsFor(key('busy')).length >= 1 ? true : undefined),
        { timeoutMs: 10_000 },
      );
      for (let i = 0; i < 10; i += 1) await annotate('busy', String(i));
      await waitFor('the burst delivered', async () => (burstDelivered ? true : undefined), {
        timeoutMs: 10_000,
      });
      await waitFor(
        'a reconcile for the burst',
        async () => (reconciler.callsFor(key('busy')).length >= 2 ? true : undefined),
        { timeoutMs: 10_000 },
      );
      whileHeld = reconciler.callsFor(key('busy')).length;
    } finally {
      letGo();
    }
    // While the held reconcile ran, no other reconcile of the key started beside it.
    expect(whileHeld).toBe(2);
    // The changes that came while it ran collapse into one more reconcile (not up to 10): a change
    // made after it is the fourth, which the 9 instant reconciles of an uncollapsed burst would precede.
    await waitFor(
      'the collapsed reconcile',
      async () => (reconciler.callsFor(key('busy')).length >= 3 ? true : undefined),
      {
        timeoutMs: 10_000,
      },
    );
    const changedAt = Date.now();
    await annotate('busy', 'after');
    await waitFor(
      'the reconcile of the later change',
      async () => (reconciler.callsFor(key('busy')).some((c) => c.at >= changedAt) ? true : undefined),
      {
        timeoutMs: 10_000,
      },
    );
    expect(reconciler.overlaps).toBe(0);
    expect(reconciler.callsFor(key('busy'))).toHaveLength(4);
  });

  it('when a reconcile fails, then it is retried with growing backoff until it succeeds, and then forgotten', async () => {
    await parent('flaky');
    reconciler.behaviour = async (_key, _ctx, call) => {
      if (call < 3) throw new Error('transient');
      return DONE;
    };
    await run();
    await waitFor(
      'the fourth attempt',
      async () => (reconciler.callsFor(key('flaky')).length >= 4 ? true : undefined),
      {
        timeoutMs: ROUND_TRIP_MS,
      },
    );
    const calls = reconciler.callsFor(key('flaky'));
    expect(calls.map((c) => c.failures)).toEqual([0, 1, 2, 3]);
    const gaps = calls.slice(1).map((c, i) => c.at - calls[i]!.at);
    // 100, 200, 400 ms (base 100, doubling); timers never fire early.
    expect(gaps[0]).toBeGreaterThanOrEqual(95);
    expect(gaps[1]).toBeGreaterThanOrEqual(195);
    expect(gaps[2]).toBeGreaterThanOrEqual(395);
    // After success the key is forgotten: the next failure waits the base delay again.
    reconciler.behaviour = async (_key, ctx) => {
      if (ctx.failures === 0) throw new Error('again');
      return DONE;
    };
    await annotate('flaky', 'x');
    await waitFor(
      'the retry after forgetting',
      async () => (reconciler.callsFor(key('flaky')).length >= 6 ? true : undefined),
      {
        timeoutMs: ROUND_TRIP_MS,
      },
    );
    const after = reconciler.callsFor(key('flaky')).slice(4);
    expect(after.map((c) => c.failures)).toEqual([0, 1]);
    // The base 100 ms, not the 800 ms that a fourth failure in a row would wait.
    expect(after[1]!.at - after[0]!.at).toBeLessThan(500);
    const errors = await metrics.registry.getSingleMetricAsString('settee_reconcile_errors_total');
    expect(errors).toMatch(/settee_reconcile_errors_total\{controller="test"\} 4/);
  });

  it('when a reconcile hits a real 409 Conflict, then it is retried quickly and not counted as an error', async () => {
    const created = await parent('contended');
    const stale = created.metadata!.resourceVersion!;
    await annotate('contended', 'moved-on');
    reconciler.behaviour = async (k, _ctx, call) => {
      if (call === 0) {
        const { name } = parseObjectKey(k);
        // Writing with the resourceVersion from before the annotation: the API server answers 409.
        await core().replaceNamespacedConfigMap({
          namespace: namespace.name,
          name,
          body: { metadata: { name, resourceVersion: stale, labels: { test: group } }, data: { v: '2' } },
        });
      }
      return DONE;
    };
    await run();
    await waitFor(
      'the retry',
      async () => (reconciler.callsFor(key('contended')).length >= 2 ? true : undefined),
      {
        timeoutMs: ROUND_TRIP_MS,
      },
    );
    const [first, second] = reconciler.callsFor(key('contended'));
    // Not counted as a failure (failures 0, no error metric below); the conflict backoff is 10 ms,
    // and this bound, wide for a loaded machine, only says no long backoff came between.
    expect(second!.at - first!.at).toBeLessThan(1_000);
    expect(second!.failures).toBe(0);
    const text = await metrics.registry.getSingleMetricAsString('settee_reconcile_total');
    expect(text).toMatch(/settee_reconcile_total\{controller="test",outcome="conflict"\} 1/);
    expect(await metrics.registry.getSingleMetricAsString('settee_reconcile_errors_total')).not.toMatch(
      /controller="test"/,
    );
  });

  it('when a reconcile asks to be requeued after a delay, then it runs again after that delay', async () => {
    await parent('later');
    reconciler.behaviour = async (_key, _ctx, call) => (call === 0 ? requeueAfter(300) : DONE);
    await run();
    await waitFor(
      'the requeued reconcile',
      async () => (reconciler.callsFor(key('later')).length >= 2 ? true : undefined),
      {
        timeoutMs: ROUND_TRIP_MS,
      },
    );
    const [first, second] = reconciler.callsFor(key('later'));
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(295);
    await sleep(400);
    expect(reconciler.callsFor(key('later'))).toHaveLength(2);
  });

  it('when stopped during a reconcile, then stop waits for it, its signal is aborted, and nothing runs afterwards', async () => {
    await parent('long');
    let sawAbort = false;
    let finished = false;
    reconciler.behaviour = async (_key, ctx) => {
      await sleep(300);
      sawAbort = ctx.signal.aborted;
      finished = true;
      return requeueAfter(10);
    };
    await run();
    await waitFor('the reconcile to begin', async () => (reconciler.calls.length >= 1 ? true : undefined), {
      timeoutMs: ROUND_TRIP_MS,
    });
    await controller.stop();
    expect(finished).toBe(true);
    expect(sawAbort).toBe(true);
    await annotate('long', 'after-stop');
    await sleep(200);
    expect(reconciler.calls).toHaveLength(1);
    expect(controller.isRunning).toBe(false);
  });

  it('when a resync period is set, then unchanged objects are reconciled again each period', async () => {
    await controller.stop();
    const parents = informers.informerFor<V1ConfigMap>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      plural: 'configmaps',
      labelSelector: `test=${group}`,
    });
    controller = new Controller({
      name: 'resync',
      reconciler,
      primary: parents,
      watches: [{ informer: parents, toKeys: ownKey }],
      workers: 1,
      resyncPeriodMs: 150,
      backoff: { baseMs: 50, maxMs: 200 },
      logger: createSilentLogger(),
    });
    await parent('steady');
    await run();
    await waitFor(
      'three reconciles from resync',
      async () => (reconciler.callsFor(key('steady')).length >= 3 ? true : undefined),
      {
        timeoutMs: ROUND_TRIP_MS,
      },
    );
  });
});
