import { waitFor } from '../../../../local/wait.js';
import { parseObjectKey } from '../../../../kube/controller-runtime/object-key.js';
import { requeueAfter, DONE } from '../../../../kube/controller-runtime/reconciler.js';
import {
  controllerTestbed,
  ROUND_TRIP_MS,
  type ControllerTestbed,
  type RecordingReconciler,
} from '../../../helpers/controller-testbed.js';
import { useTestNamespace } from '../../../helpers/kube.js';

// Own writes and bursts, which wake fewer reconciles than events: fewer-reconciles-than-events.test.ts.
const namespace = useTestNamespace('controller');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Controller', () => {
  let test = 0;
  let bed: ControllerTestbed;
  let reconciler: RecordingReconciler;
  let controller: ControllerTestbed['controller'];
  let metrics: ControllerTestbed['metrics'];
  let group: string;
  let prefix: string;
  let key: ControllerTestbed['key'];
  let parent: ControllerTestbed['parent'];
  let annotate: ControllerTestbed['annotate'];
  let run: ControllerTestbed['run'];
  const core = () => bed.core();

  beforeEach(() => {
    bed = controllerTestbed({ namespace: namespace.name, group: `t${++test}` });
    ({ reconciler, controller, metrics, group, prefix, key, parent, annotate, run } = bed);
  });

  afterEach(async () => {
    await bed.stop();
  });

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
    await bed.stop();
    bed = controllerTestbed({ namespace: namespace.name, group, resyncPeriodMs: 150 });
    ({ reconciler, key, parent, run } = bed);
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
