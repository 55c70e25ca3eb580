import { CoreV1Api, KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { waitFor } from '../../../local/wait.js';
import { InformerStoppedError, ResilientInformer, type InformerEvent } from '../../../kube/informer.js';
import { LIST_PAGE_SIZE } from '../../../kube/list-objects.js';
import { LAST_APPLIED_ANNOTATION, trimKey, type ObjectTrims } from '../../../kube/object-trim.js';
import type { WatchedResource } from '../../../kube/resource-path.js';
import type { WatchTimeoutPolicy } from '../../../kube/watch.js';
import { createSilentLogger } from '../../../observability/logger.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { apiserverRequestCounts } from '../../helpers/kube/apiserver-requests.js';
import { TcpForwarder } from '../../helpers/tcp-forwarder.js';

const namespace = useTestNamespace('informer');
const other = useTestNamespace('informer-other');
/** Labels the objects of the paging test, which its cleanup deletes in one call. */
const PAGED = 'informer-test=paged';

function configMaps(): WatchedResource {
  return { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespace: namespace.name };
}

function summary(event: InformerEvent<V1ConfigMap>): string {
  const base = `${event.type} ${event.object.metadata?.name}=${event.object.data?.v ?? ''}`;
  return event.type === 'update' ? `${base} (was ${event.previous?.data?.v ?? '?'})` : base;
}

describe('ResilientInformer', () => {
  const core = () => testControlPlane().kubeConfig.makeApiClient(CoreV1Api);
  const started: ResilientInformer<V1ConfigMap>[] = [];
  const forwarders: TcpForwarder[] = [];

  function startInformer(
    options: {
      kubeConfig?: ReturnType<typeof testControlPlane>['kubeConfig'];
      onRestart?: () => void;
      watchTimeout?: WatchTimeoutPolicy;
      trims?: ObjectTrims;
    } = {},
  ) {
    const informer = new ResilientInformer<V1ConfigMap>({
      kubeConfig: options.kubeConfig ?? testControlPlane().kubeConfig,
      resource: configMaps(),
      logger: createSilentLogger(),
      restartBackoff: { baseMs: 50, maxMs: 400 },
      onRestart: options.onRestart,
      watchTimeout: options.watchTimeout,
      trims: options.trims,
    });
    const events: string[] = [];
    informer.onEvent((event) => {
      if (event.object.metadata?.name?.startsWith('cm-')) events.push(summary(event));
    });
    started.push(informer);
    informer.start();
    return { informer, events };
  }

  afterEach(async () => {
    await Promise.all(started.splice(0).map((informer) => informer.stop()));
    await Promise.all(forwarders.splice(0).map((forwarder) => forwarder.cut()));
    const existing = await core().listNamespacedConfigMap({ namespace: namespace.name });
    for (const cm of existing.items.filter((c) => c.metadata?.name?.startsWith('cm-'))) {
      await core().deleteNamespacedConfigMap({ namespace: namespace.name, name: cm.metadata!.name! });
    }
    await core().deleteCollectionNamespacedConfigMap({ namespace: namespace.name, labelSelector: PAGED });
  });

  const put = (name: string, v: string, ns = namespace.name) =>
    core().createNamespacedConfigMap({ namespace: ns, body: { metadata: { name }, data: { v } } });
  const patch = (name: string, v: string) =>
    core().replaceNamespacedConfigMap({
      namespace: namespace.name,
      name,
      body: { metadata: { name }, data: { v } },
    });
  const remove = (name: string) => core().deleteNamespacedConfigMap({ namespace: namespace.name, name });

  /** An informer that reaches the API server through a forwarder the test can cut or freeze. */
  async function startThroughForwarder(watchTimeout?: WatchTimeoutPolicy) {
    const forwarder = await TcpForwarder.start(testControlPlane().server);
    forwarders.push(forwarder);
    let restarts = 0;
    const start = (): ReturnType<typeof startInformer> =>
      startInformer({
        kubeConfig: forwarder.kubeConfigThrough(testControlPlane().kubeConfig),
        onRestart: () => restarts++,
        watchTimeout,
      });
    return { forwarder, start, restarts: () => restarts };
  }

  /** The changes a disconnected informer must catch up on, and the events they must produce. */
  async function changeWhileAway(): Promise<string[]> {
    await put('cm-new', '1');
    await patch('cm-kept', '2');
    await remove('cm-gone');
    return ['add cm-new=1', 'delete cm-gone=1', 'update cm-kept=2 (was 1)'];
  }

  const waitForEvent = (events: string[], event: string) =>
    waitFor(`the event ${event}`, async () => (events.includes(event) ? true : undefined), {
      timeoutMs: 10_000,
    });

  it('when objects exist before start, then synced resolves only once the cache holds them all', async () => {
    await Promise.all(['cm-a', 'cm-b', 'cm-c'].map((name) => put(name, '1')));
    const { informer, events } = startInformer();
    expect(informer.hasSynced()).toBe(false);
    await informer.synced;
    expect(informer.hasSynced()).toBe(true);
    const names = informer
      .list(namespace.name)
      .map((cm) => cm.metadata?.name)
      .filter((n) => n?.startsWith('cm-'));
    expect(names.sort()).toEqual(['cm-a', 'cm-b', 'cm-c']);
    expect(events.sort()).toEqual(['add cm-a=1', 'add cm-b=1', 'add cm-c=1']);
    // The cache holds the API's JSON: timestamps are strings, as in watch events, never Date objects.
    expect(
      typeof informer.get({ namespace: namespace.name, name: 'cm-a' })?.metadata?.creationTimestamp,
    ).toBe('string');
  });

  it('when more objects exist than one list page holds, then the informer lists them in pages, caches and reports each once, and its watch goes on from the list without losing one created meanwhile', async () => {
    const createPaged = async (names: string[]) => {
      for (let i = 0; i < names.length; i += 25) {
        await Promise.all(
          names.slice(i, i + 25).map((name) =>
            core().createNamespacedConfigMap({
              namespace: namespace.name,
              body: { metadata: { name, labels: { 'informer-test': 'paged' } }, data: { v: '1' } },
            }),
          ),
        );
      }
    };
    const names = Array.from({ length: LIST_PAGE_SIZE + 30 }, (_, i) => `paged-${i}`);
    await createPaged(names.slice(0, LIST_PAGE_SIZE + 10));
    const listsBefore =
      (await apiserverRequestCounts(testControlPlane().kubeConfig)).get('LIST configmaps') ?? 0;
    let restarts = 0;
    // Counts the requests the informer begins (each page of its list is one, its watch comes after
    // the list), so that the trim can tell how many pages had been asked for when it first saw each object.
    const shared = testControlPlane().kubeConfig;
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: shared.clusters,
      users: shared.users,
      contexts: shared.contexts,
      currentContext: shared.getCurrentContext(),
    });
    let requests = 0;
    const applyOptions = kubeConfig.applyToHTTPSOptions.bind(kubeConfig);
    kubeConfig.applyToHTTPSOptions = (options) => {
      requests += 1;
      return applyOptions(options);
    };
    const requestsAtFirstTrim = new Map<string, number>();
    const trims: ObjectTrims = new Map([
      [
        trimKey({ apiVersion: 'v1', kind: 'ConfigMap' }),
        (cm) => {
          // Every ConfigMap of the namespace (its kube-root-ca.crt too): a page holds any of them.
          const name = cm.metadata?.name ?? '';
          if (!requestsAtFirstTrim.has(name)) requestsAtFirstTrim.set(name, requests);
        },
      ],
    ]);
    const { informer } = startInformer({ kubeConfig, trims, onRestart: () => (restarts += 1) });
    const adds = new Map<string, number>();
    informer.onEvent((event) => {
      const name = event.object.metadata?.name ?? '';
      if (event.type === 'add' && name.startsWith('paged-')) adds.set(name, (adds.get(name) ?? 0) + 1);
    });
    // Created while the informer lists (in its list or after it, whichever the race gives), then
    // after it synced (only by its watch).
    await createPaged(names.slice(LIST_PAGE_SIZE + 10, LIST_PAGE_SIZE + 20));
    await informer.synced;
    const listsAfter =
      (await apiserverRequestCounts(testControlPlane().kubeConfig)).get('LIST configmaps') ?? 0;
    await createPaged(names.slice(LIST_PAGE_SIZE + 20));
    const cached = () =>
      informer.list(namespace.name).filter((cm) => cm.metadata?.name?.startsWith('paged-'));
    await waitFor(
      'every paged object cached',
      async () => (cached().length >= names.length ? true : undefined),
      {
        timeoutMs: 30_000,
      },
    );
    expect(
      cached()
        .map((cm) => cm.metadata?.name)
        .sort(),
    ).toEqual([...names].sort());
    expect([...adds.keys()].sort()).toEqual([...names].sort());
    expect([...adds.values()].every((count) => count === 1)).toBe(true);
    // One list of more than a page is at least two requests; an unpaged list is one. A restart
    // would list again, so there must be none.
    expect(restarts).toBe(0);
    expect(listsAfter - listsBefore).toBeGreaterThanOrEqual(2);
    // Each page is trimmed as it arrives, before the next is asked for: the first page's objects
    // while only one request had begun (trimmed only once the whole list was in, every one saw two).
    expect([...requestsAtFirstTrim.values()].slice(0, LIST_PAGE_SIZE)).toEqual(
      Array.from({ length: LIST_PAGE_SIZE }, () => 1),
    );
  });

  it('when objects are created, updated and deleted, then the informer reports each with the previous object, and its cache follows', async () => {
    const { informer, events } = startInformer();
    await informer.synced;
    await put('cm-x', '1');
    await patch('cm-x', '2');
    await put('cm-elsewhere', '1', other.name);
    await remove('cm-x');
    await waitFor('add, update, delete of cm-x', async () => (events.length >= 3 ? true : undefined), {
      timeoutMs: 10_000,
    });
    expect(events).toEqual(['add cm-x=1', 'update cm-x=2 (was 1)', 'delete cm-x=2']);
    expect(informer.get({ namespace: namespace.name, name: 'cm-x' })).toBeUndefined();
    expect(informer.list().some((cm) => cm.metadata?.namespace === other.name)).toBe(false);
  });

  it('when objects come from the list or from the watch, then the cache and its handlers hold them trimmed: managedFields only naming their writers, no last-applied copy, nothing the kind’s trim drops', async () => {
    const create = (name: string) =>
      core().createNamespacedConfigMap({
        namespace: namespace.name,
        body: {
          metadata: { name, annotations: { [LAST_APPLIED_ANNOTATION]: '{}', kept: 'yes' } },
          data: { v: '1', unread: 'x'.repeat(1_000) },
        },
      });
    const listed = await create('cm-listed');
    // The API server records a field manager and its fields on every write: the informer keeps the manager.
    expect(listed.metadata?.managedFields?.length).toBeGreaterThan(0);
    // Chosen by the informer's resource: a list's items carry no kind of their own.
    const trims: ObjectTrims = new Map([
      [trimKey({ apiVersion: 'v1', kind: 'ConfigMap' }), (cm) => delete (cm as V1ConfigMap).data?.unread],
    ]);
    const { informer } = startInformer({ trims });
    const seen: V1ConfigMap[] = [];
    informer.onEvent((event) => seen.push(event.object));
    await informer.synced;
    await create('cm-watched');
    const watched = await waitFor(
      'cm-watched in the cache',
      async () => informer.get({ namespace: namespace.name, name: 'cm-watched' }),
      { timeoutMs: 10_000 },
    );
    const cached = [informer.get({ namespace: namespace.name, name: 'cm-listed' }), watched];
    expect(cached.map((cm) => cm?.metadata?.name)).toEqual(['cm-listed', 'cm-watched']);
    for (const cm of [...cached, ...seen.filter((o) => o.metadata?.name?.startsWith('cm-'))]) {
      expect(cm?.metadata?.managedFields).toEqual([{ manager: expect.any(String), operation: 'Update' }]);
      expect(cm?.metadata?.annotations).toEqual({ kept: 'yes' });
      expect(cm?.data).toEqual({ v: '1' });
    }
  });

  it('when the API server is unreachable at start, then synced waits, and resolves once the list succeeds', async () => {
    const { forwarder, start, restarts } = await startThroughForwarder();
    await forwarder.cut();
    await put('cm-early', '1');
    const { informer } = start();
    // Its list fails and is tried again; a loaded machine may space the tries out.
    await waitFor('two failed lists', async () => (restarts() >= 2 ? true : undefined), {
      timeoutMs: 10_000,
    });
    expect(informer.hasSynced()).toBe(false);
    await forwarder.restore();
    await informer.synced;
    expect(informer.get({ namespace: namespace.name, name: 'cm-early' })?.data?.v).toBe('1');
  });

  it('when its watch is broken, then it restarts with backoff and catches up on what changed meanwhile', async () => {
    const { forwarder, start, restarts } = await startThroughForwarder();
    await put('cm-kept', '1');
    await put('cm-gone', '1');
    const { informer, events } = start();
    await informer.synced;
    await forwarder.cut();
    const expected = await changeWhileAway();
    await waitFor('a restart attempt', async () => (restarts() > 0 ? true : undefined), { timeoutMs: 5_000 });
    await forwarder.restore();
    await waitFor(
      'the changes made while disconnected',
      async () => (events.length >= 5 ? true : undefined),
      { timeoutMs: 10_000 },
    );
    expect(events.slice(0, 2).sort()).toEqual(['add cm-gone=1', 'add cm-kept=1']);
    expect(events.slice(2).sort()).toEqual(expected);
    // And it keeps watching after the restart.
    await put('cm-after', '1');
    await waitForEvent(events, 'add cm-after=1');
  });

  /** Each watch lives 1-2 s (the server ends it), and is given up 500 ms after that. */
  // A grace of 1.5 s: a watch the server ended on time but whose end a loaded machine hears late
  // must not be taken as stalled.
  const SHORT_WATCHES: WatchTimeoutPolicy = { minMs: 1_000, graceMs: 1_500 };
  const WATCH_DEADLINE_MS = 2 * SHORT_WATCHES.minMs + SHORT_WATCHES.graceMs;

  it('when the API server ends each watch after its timeout, then the informer watches on from where it was, without an error or a relist', async () => {
    const { forwarder, start, restarts } = await startThroughForwarder(SHORT_WATCHES);
    await put('cm-steady', '1');
    const { informer, events } = start();
    await informer.synced;
    const cached = informer.get({ namespace: namespace.name, name: 'cm-steady' });
    const connectionsBefore = forwarder.accepted;
    // At least two watches end (each lives at most 2 s). This client opens a connection per
    // request: each new one is a new watch.
    await waitFor(
      'two more watches',
      async () => (forwarder.accepted - connectionsBefore >= 2 ? true : undefined),
      { timeoutMs: 4 * 2 * SHORT_WATCHES.minMs },
    );
    expect(restarts()).toBe(0);
    // A relist would have replaced the cached object with a fresh copy of it.
    expect(informer.get({ namespace: namespace.name, name: 'cm-steady' })).toBe(cached);
    await patch('cm-steady', '2');
    await waitForEvent(events, 'update cm-steady=2 (was 1)');
  });

  it('when its watch connection goes silent without closing, then the watch is given up at its deadline and the informer catches up', async () => {
    const { forwarder, start, restarts } = await startThroughForwarder(SHORT_WATCHES);
    await put('cm-kept', '1');
    await put('cm-gone', '1');
    const { informer, events } = start();
    await informer.synced;
    // Half-open: the watch hears nothing more, not even the server ending it. Frozen while it
    // delivers an event, so it is certainly the live watch that goes silent.
    let frozenAt = 0;
    informer.onEvent((event) => {
      if (event.object.metadata?.name !== 'cm-probe' || frozenAt) return;
      forwarder.freeze();
      frozenAt = Date.now();
    });
    await put('cm-probe', '1');
    await waitFor('the watch to go silent', async () => (frozenAt ? true : undefined), { timeoutMs: 15_000 });
    const expected = await changeWhileAway();
    await waitFor(
      'the changes made while the watch was silent',
      async () => (events.length >= 6 ? true : undefined),
      { timeoutMs: WATCH_DEADLINE_MS + 5_000 },
    );
    const caughtUpMs = Date.now() - frozenAt;
    expect(events.slice(3).sort()).toEqual(expected);
    // Given up as dead (an error and a restart), not ended by the server, within the deadline.
    expect(restarts()).toBeGreaterThanOrEqual(1);
    expect(caughtUpMs).toBeLessThan(WATCH_DEADLINE_MS + 2_000);
  });

  it('when stopped before its first list, then synced rejects with InformerStoppedError', async () => {
    const { forwarder, start } = await startThroughForwarder();
    await forwarder.cut();
    const { informer } = start();
    await informer.stop();
    await expect(informer.synced).rejects.toBeInstanceOf(InformerStoppedError);
  });
});
