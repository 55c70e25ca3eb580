import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { waitFor } from '../../../local/wait.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import {
  createInstance,
  ENGINE_START_MS,
  hasPhase,
  readInstance,
  readStatefulSet,
  testClients,
  useSuitePlatform,
  waitForInstance,
} from '../../helpers/operator/couch-instance-harness.js';

const run = promisify(execFile);
/**
 * One reconcile after the watch event (docs/couchinstance.md), through the API server and, for a
 * scale, the StatefulSet controller: seconds under load, and still far short of the 10 min resync.
 */
const RESTORED_WITHIN_MS = 15_000;

/** `kubectl scale`, as an administrator would type it. */
async function scaleByHand(namespace: string, statefulSet: string, replicas: number): Promise<void> {
  const plane = testControlPlane();
  await run(plane.kubectl, [
    '--kubeconfig',
    plane.kubeconfigPath,
    '-n',
    namespace,
    'scale',
    `statefulset/${statefulSet}`,
    `--replicas=${replicas}`,
  ]);
}

function waitForReplicas(namespace: string, name: string, replicas: number): Promise<true> {
  return waitFor(
    `StatefulSet ${namespace}/${name} back at ${replicas} replicas`,
    async () => ((await readStatefulSet(namespace, name)).spec?.replicas === replicas ? true : undefined),
    { timeoutMs: RESTORED_WITHIN_MS, intervalMs: 100 },
  );
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

// The real StatefulSet controller makes the pods and the kubelet stand-in runs them.
describe('hand edits of the objects a CouchInstance owns', () => {
  const ns = useTestNamespace('couch-hand-edits');
  useSuitePlatform(ns);

  it('when a Running instance is scaled to 0 by hand, then the operator scales it back to 1', async () => {
    await createInstance(ns.name, 'steady', { hibernation: { idleAfter: '10m' } });
    await waitForInstance(ns.name, 'steady', 'phase Running', hasPhase('Running'), ENGINE_START_MS);

    await scaleByHand(ns.name, 'steady', 0);
    await waitForReplicas(ns.name, 'steady', 1);
    expect((await readInstance(ns.name, 'steady')).status?.hibernatedAt).toBeUndefined();
  }, 120_000);

  it('when its ConfigMap and headless Service are edited by hand, then the operator writes back what the spec says', async () => {
    const { core } = testClients();
    const readConfig = async () =>
      (await core.readNamespacedConfigMap({ namespace: ns.name, name: 'steady-config' })).data?.[
        'settee.ini'
      ];
    const readPublishNotReady = async () =>
      (await core.readNamespacedService({ namespace: ns.name, name: 'steady-headless' })).spec
        ?.publishNotReadyAddresses;
    const ini = await readConfig();
    expect(ini).toContain('single_node = true');
    expect(await readPublishNotReady()).toBe(true);

    await core.patchNamespacedConfigMap(
      {
        namespace: ns.name,
        name: 'steady-config',
        body: { data: { 'settee.ini': '[log]\nlevel = debug\n' } },
      },
      mergePatch,
    );
    await core.patchNamespacedService(
      { namespace: ns.name, name: 'steady-headless', body: { spec: { publishNotReadyAddresses: false } } },
      mergePatch,
    );
    await waitFor(
      'the ConfigMap and the Service restored',
      async () => ((await readConfig()) === ini && (await readPublishNotReady()) === true ? true : undefined),
      { timeoutMs: RESTORED_WITHIN_MS, intervalMs: 100 },
    );
  });

  it('when a hibernated instance is scaled up by hand, then the operator scales it back to 0 and it stays hibernated', async () => {
    // Idle from the start: it hibernates a second after it runs.
    await createInstance(ns.name, 'sleeping', { hibernation: { idleAfter: '1s' } });
    const hibernated = await waitForInstance(
      ns.name,
      'sleeping',
      'phase Hibernated',
      hasPhase('Hibernated'),
      // Its engine started by the kubelet stand-in, Ready, then idle: the start is the slow part under load.
      ENGINE_START_MS,
    );
    expect((await readStatefulSet(ns.name, 'sleeping')).spec?.replicas).toBe(0);

    await scaleByHand(ns.name, 'sleeping', 1);
    await waitForReplicas(ns.name, 'sleeping', 0);
    // The StatefulSet controller may have started a pod meanwhile: Hibernated again once it is gone.
    // (Its engine started and stopped again by the kubelet stand-in, under load.)
    const after = await waitForInstance(
      ns.name,
      'sleeping',
      'phase Hibernated',
      hasPhase('Hibernated'),
      ENGINE_START_MS,
    );
    expect(after.status?.phase).toBe('Hibernated');
    expect(after.status?.hibernatedAt).toBe(hibernated.status?.hibernatedAt);
  }, 180_000);
});
