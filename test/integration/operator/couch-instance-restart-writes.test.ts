import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { waitFor } from '../../../local/wait.js';
import type { RunningOperator } from '../../../operator/operator.js';
import { apiserverRequestCounts } from '../../helpers/kube/apiserver-requests.js';
import { callsBetween } from '../../helpers/calls-between.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import {
  createInstance,
  hasPhase,
  metricValue,
  patchInstance,
  readStatefulSet,
  startTestOperator,
  testClients,
  waitForInstance,
} from '../../helpers/operator/couch-instance-harness.js';

const run = promisify(execFile);
const INSTANCES = 20;
/** Twenty instances reconciled by four workers through a loaded API server. */
const CONVERGED_WITHIN_MS = 90_000;
const OUTCOMES = ['success', 'requeue', 'error'];
/** All requests but the writes of owned objects: server-side applies and the admin Secret's create. */
const ALL_BUT_OWNED_WRITES = /^(?!(APPLY (statefulsets|services|configmaps|secrets)|POST secrets)$)/;

async function reconciles(operator: RunningOperator): Promise<number> {
  let total = 0;
  for (const outcome of OUTCOMES)
    total += await metricValue(
      operator,
      `settee_reconcile_total{controller="couch-instance",outcome="${outcome}"}`,
    );
  return total;
}

/** Waits until the operator reconciled at least `count` times and has nothing queued. */
async function waitForQuiet(operator: RunningOperator, count: number): Promise<void> {
  await waitFor(
    `${count} reconciles and an empty queue`,
    async () =>
      (await reconciles(operator)) >= count &&
      (await metricValue(operator, 'settee_workqueue_depth{controller="couch-instance"}')) === 0
        ? true
        : undefined,
    { timeoutMs: CONVERGED_WITHIN_MS, intervalMs: 200 },
  );
}

describe('the writes of a restarted operator', () => {
  const ns = useTestNamespace('couch-restart-writes');
  let operator: RunningOperator | undefined;

  afterEach(async () => {
    await operator?.stop();
    operator = undefined;
  });

  it('when the operator restarts over converged instances, then it applies only the objects edited by hand or whose instance changed while it was down, and patches only the status that changed', async () => {
    operator = await startTestOperator({ namespace: ns.name });
    const names = Array.from({ length: INSTANCES }, (_, i) => `steady-${i}`);
    await Promise.all(names.map((name) => createInstance(ns.name, name, {})));
    for (const name of names)
      await waitForInstance(ns.name, name, 'phase Starting', hasPhase('Starting'), CONVERGED_WITHIN_MS);
    await waitForQuiet(operator, INSTANCES);
    await operator.stop();

    // While no operator runs: `kubectl scale` of one instance, an edit of another's ConfigMap, one
    // that removes a field of a third's Service (false is its zero value, which is not stored, so
    // the edit leaves no field manager of its own in managedFields), an edit of a fourth's pod
    // template (which the cache does not keep) and a change of a fifth's spec.
    const plane = testControlPlane();
    await run(plane.kubectl, [
      ...['--kubeconfig', plane.kubeconfigPath, '-n', ns.name],
      ...['scale', 'statefulset/steady-0', '--replicas=0'],
    ]);
    const { core } = testClients();
    const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    await core.patchNamespacedConfigMap(
      { namespace: ns.name, name: 'steady-1-config', body: { data: { 'settee.ini': '; edited' } } },
      mergePatch,
    );
    await core.patchNamespacedService(
      { namespace: ns.name, name: 'steady-2-headless', body: { spec: { publishNotReadyAddresses: false } } },
      mergePatch,
    );
    const { apps } = testClients();
    await apps.patchNamespacedStatefulSet(
      {
        namespace: ns.name,
        name: 'steady-3',
        body: { spec: { template: { spec: { terminationGracePeriodSeconds: 5 } } } },
      },
      mergePatch,
    );
    await patchInstance(ns.name, 'steady-4', { spec: { resources: { limits: { memory: '700Mi' } } } });
    const before = await apiserverRequestCounts(plane.kubeConfig);

    operator = await startTestOperator({ namespace: ns.name });
    await waitFor(
      'the hand edits undone',
      async () =>
        (await readStatefulSet(ns.name, 'steady-0')).spec?.replicas === 1 &&
        (await core.readNamespacedConfigMap({ namespace: ns.name, name: 'steady-1-config' })).data?.[
          'settee.ini'
        ] !== '; edited' &&
        (await core.readNamespacedService({ namespace: ns.name, name: 'steady-2-headless' })).spec
          ?.publishNotReadyAddresses === true &&
        (await readStatefulSet(ns.name, 'steady-3')).spec?.template.spec?.terminationGracePeriodSeconds ===
          30 &&
        (await readStatefulSet(ns.name, 'steady-4')).spec?.template.spec?.containers[0]?.resources?.limits
          ?.memory === '700Mi'
          ? true
          : undefined,
      { timeoutMs: CONVERGED_WITHIN_MS, intervalMs: 200 },
    );
    await waitForQuiet(operator, INSTANCES);
    // Stopped first: every write it sent has been answered and counted.
    await operator.stop();
    operator = undefined;
    const after = await apiserverRequestCounts(plane.kubeConfig);
    const writes = callsBetween(before, after, ALL_BUT_OWNED_WRITES);
    // Only the objects edited: of the StatefulSets the one whose pod template was edited and the one
    // whose instance changed (steady-0's replicas go through its scale); of the rest the ConfigMap and
    // the Service. An apply whose answer came too late for the operator (at load 54 once) is sent
    // again. The code before applied every StatefulSet (its cached copy has no pod template to
    // compare), and before that all 5 objects of each instance.
    const applies = (resource: string) => writes.get(`APPLY ${resource}`) ?? 0;
    expect(applies('secrets')).toBe(0);
    expect(applies('configmaps')).toBeGreaterThanOrEqual(1);
    expect(applies('configmaps') + applies('services')).toBeLessThanOrEqual(3);
    expect(applies('services')).toBeGreaterThanOrEqual(1);
    expect(applies('statefulsets')).toBeGreaterThanOrEqual(2);
    expect(applies('statefulsets')).toBeLessThanOrEqual(4);
    expect(writes.get('POST secrets')).toBeUndefined();
    // Status: only the instance whose spec changed (its observedGeneration), one more for an answer
    // that came too late. A status re-stamped on restart (a recomputed time) would be one per instance.
    const statusPatches = callsBetween(before, after, /^(?!PATCH couchinstances\/status$)/);
    expect(statusPatches.get('PATCH couchinstances/status') ?? 0).toBeGreaterThanOrEqual(1);
    expect(statusPatches.get('PATCH couchinstances/status') ?? 0).toBeLessThanOrEqual(2);
  }, 300_000);
});
