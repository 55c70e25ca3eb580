import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { StorageV1Api, type KubernetesObject } from '@kubernetes/client-node';
import { waitFor } from '../../../local/wait.js';
import { ADMIN_SECRET_KEYS } from '../../../api/contract.js';
import type { RunningOperator } from '../../../operator/operator.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import {
  conditionOf,
  createInstance,
  hasPhase,
  instanceApi,
  metricValue,
  patchInstance,
  readInstance,
  readStatefulSet,
  startTestOperator,
  testClients,
  waitForEventReasons,
  waitForInstance,
} from '../../helpers/operator/couch-instance-harness.js';

const run = promisify(execFile);
const decode = (value: string | undefined) => Buffer.from(value ?? '', 'base64').toString('utf8');

describe('a CouchInstance and the objects it owns', () => {
  const ns = useTestNamespace('couch-objects');
  let operator: RunningOperator;

  beforeAll(async () => {
    operator = await startTestOperator({ namespace: ns.name });
  });
  afterAll(() => operator?.stop());

  it('when a free instance is applied, then its Secret, ConfigMap, Services and StatefulSet exist as specified, with status', async () => {
    const { core } = testClients();
    const created = await createInstance(ns.name, 'orders', { hibernation: { idleAfter: '10m' } });
    const instance = await waitForInstance(ns.name, 'orders', 'phase Starting', hasPhase('Starting'));

    expect(instance.spec).toEqual({ plan: 'free', keepAlive: false, hibernation: { idleAfter: '10m' } });
    expect(instance.status).toMatchObject({
      endpoint: `http://127.0.0.1:8080/db/${ns.name}/orders`,
      credentialsSecret: 'orders-admin',
      readyReplicas: 0,
      observedGeneration: 1,
    });
    // The message is asserted too so that a scheduler's refusal, were one to show here, names itself.
    expect(conditionOf(instance, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'Starting',
      message: 'CouchDB is starting',
    });
    expect(conditionOf(instance, 'Active')).toMatchObject({ status: 'True' });
    expect(conditionOf(instance, 'Progressing')).toMatchObject({ status: 'True' });
    expect(conditionOf(instance, 'Degraded')).toMatchObject({ status: 'False' });

    const secret = await core.readNamespacedSecret({ namespace: ns.name, name: 'orders-admin' });
    const username = decode(secret.data?.[ADMIN_SECRET_KEYS.username]);
    const password = decode(secret.data?.[ADMIN_SECRET_KEYS.password]);
    expect(password.length).toBeGreaterThanOrEqual(32);
    expect(decode(secret.data?.[ADMIN_SECRET_KEYS.url])).toBe(
      `http://${username}:${password}@127.0.0.1:8080/db/${ns.name}/orders`,
    );

    const configMap = await core.readNamespacedConfigMap({ namespace: ns.name, name: 'orders-config' });
    const ini = configMap.data?.['settee.ini'] ?? '';
    expect(ini).toContain('single_node = true');
    expect(ini).toContain(`uuid = ${created.metadata.uid?.replaceAll('-', '')}`);
    expect(ini).toContain('name = Settee');
    expect(ini).toContain('bind_address = 0.0.0.0');
    expect(ini).toMatch(new RegExp(`${username} = -pbkdf2:sha256-[0-9a-f]{64},[0-9a-f]{32},50000`));
    expect(ini).not.toContain(password);

    const headless = await core.readNamespacedService({ namespace: ns.name, name: 'orders-headless' });
    expect(headless.spec).toMatchObject({ clusterIP: 'None', publishNotReadyAddresses: true });
    const client = await core.readNamespacedService({ namespace: ns.name, name: 'orders' });
    expect(client.spec?.ports?.[0]).toMatchObject({ port: 5984, targetPort: 'http' });

    const statefulSet = await readStatefulSet(ns.name, 'orders');
    const pod = statefulSet.spec?.template.spec;
    expect(statefulSet.spec).toMatchObject({ replicas: 1, serviceName: 'orders-headless' });
    expect(pod?.containers[0]).toMatchObject({
      image: 'couchdb:3.5.1',
      readinessProbe: { httpGet: { path: '/_up' } },
      resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { cpu: '500m', memory: '512Mi' } },
    });
    expect(pod?.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 5984 });
    expect(statefulSet.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests).toEqual({
      storage: '1Gi',
    });
  });

  it('when a paid instance pins a region and adds storage, then the StatefulSet carries the affinity and the size', async () => {
    await createInstance(ns.name, 'analytics', {
      plan: 'paid',
      version: '3.4.3',
      keepAlive: true,
      addons: { largerStorage: { size: '20Gi' }, regionPinning: { region: 'eu-west-1' } },
      resources: { limits: { cpu: '2', memory: '4Gi' } },
    });
    await waitForInstance(ns.name, 'analytics', 'phase Starting', hasPhase('Starting'));
    const statefulSet = await readStatefulSet(ns.name, 'analytics');
    expect(statefulSet.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests).toEqual({
      storage: '20Gi',
    });
    expect(
      statefulSet.spec?.template.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution
        ?.nodeSelectorTerms[0]?.matchExpressions?.[0],
    ).toEqual({ key: 'topology.kubernetes.io/region', operator: 'In', values: ['eu-west-1'] });
    expect(statefulSet.spec?.template.spec?.containers[0]?.image).toBe('couchdb:3.4.3');
  });

  it('when the instance is deleted, then the garbage collector removes every object it owned by their controller references', async () => {
    const { core, apps, custom } = testClients();
    const instance = await createInstance(ns.name, 'short-lived', {});
    await waitForInstance(ns.name, 'short-lived', 'phase Starting', hasPhase('Starting'));
    const labelSelector = 'settee.dev/instance=short-lived';
    const listOwned = async (): Promise<KubernetesObject[]> => [
      ...(await core.listNamespacedSecret({ namespace: ns.name, labelSelector })).items,
      ...(await core.listNamespacedConfigMap({ namespace: ns.name, labelSelector })).items,
      ...(await core.listNamespacedService({ namespace: ns.name, labelSelector })).items,
      ...(await apps.listNamespacedStatefulSet({ namespace: ns.name, labelSelector })).items,
    ];
    const owned = await waitFor(
      'every owned object',
      async () => {
        const objects = await listOwned();
        return objects.length === 5 ? objects : undefined;
      },
      { timeoutMs: 10_000 },
    );
    expect(owned.map((o) => o.metadata?.name).sort()).toEqual([
      'short-lived',
      'short-lived',
      'short-lived-admin',
      'short-lived-config',
      'short-lived-headless',
    ]);
    for (const object of owned) {
      expect(object.metadata?.ownerReferences).toEqual([
        {
          apiVersion: 'settee.dev/v1alpha1',
          kind: 'CouchInstance',
          name: 'short-lived',
          uid: instance.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
    }
    await custom.deleteNamespacedCustomObject({ ...instanceApi(ns.name), name: 'short-lived' });
    await waitFor(
      'the operator to forget the deleted instance',
      async () =>
        (await metricValue(operator, 'settee_couch_instances{phase="Starting"}')) === 2 ? true : undefined,
      { timeoutMs: 20_000 },
    );
    const claims = () =>
      core.listNamespacedPersistentVolumeClaim({ namespace: ns.name, labelSelector }).then((l) => l.items);
    await waitFor(
      'the garbage collector to remove the owned objects, the pod and its claim',
      async () => ((await listOwned()).length === 0 && (await claims()).length === 0 ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 200 },
    );
  }, 120_000);

  it('when a paid instance turns largerStorage on, then its bound PVC grows and the immutable claim template stays', async () => {
    const { core } = testClients();
    const storage = testControlPlane().kubeConfig.makeApiClient(StorageV1Api);
    const storageClassName = `${ns.name}-expandable`;
    const volumeName = `${ns.name}-growing`;
    await storage.createStorageClass({
      body: {
        metadata: { name: storageClassName },
        provisioner: 'example.com/test',
        allowVolumeExpansion: true,
      },
    });
    try {
      await createInstance(ns.name, 'growing', { plan: 'paid', storage: { size: '1Gi', storageClassName } });
      await waitForInstance(ns.name, 'growing', 'phase Starting', hasPhase('Starting'));
      // The StatefulSet controller makes the claim from the template; nothing provisions this
      // class, so the test provides the volume (static provisioning) and the PV controller binds.
      await core.createPersistentVolume({
        body: {
          metadata: { name: volumeName },
          spec: {
            capacity: { storage: '1Gi' },
            accessModes: ['ReadWriteOnce'],
            storageClassName,
            hostPath: { path: '/nonexistent/settee-test-volume' },
            claimRef: { namespace: ns.name, name: 'data-growing-0' },
          },
        },
      });
      await waitFor(
        'the claim to be bound',
        async () => {
          const claim = await core
            .readNamespacedPersistentVolumeClaim({ namespace: ns.name, name: 'data-growing-0' })
            .catch(() => undefined);
          return claim?.status?.phase === 'Bound' ? true : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 100 },
      );

      await patchInstance(ns.name, 'growing', { spec: { addons: { largerStorage: { size: '5Gi' } } } });
      await waitFor(
        'the PVC to ask for 5Gi',
        async () => {
          const claim = await core.readNamespacedPersistentVolumeClaim({
            namespace: ns.name,
            name: 'data-growing-0',
          });
          return claim.spec?.resources?.requests?.storage === '5Gi' ? true : undefined;
        },
        { timeoutMs: 20_000 },
      );
      const statefulSet = await readStatefulSet(ns.name, 'growing');
      expect(statefulSet.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests).toEqual({
        storage: '1Gi',
      });
      await waitForEventReasons(ns.name, 'growing', ['VolumeExpansionRequested']);
    } finally {
      await storage.deleteStorageClass({ name: storageClassName });
      await core.deletePersistentVolume({ name: volumeName }).catch(() => undefined);
    }
  }, 120_000);

  it('when an unchanged instance is reconciled again, then the operator writes nothing', async () => {
    const { core, apps } = testClients();
    const versions = async () => [
      (await readInstance(ns.name, 'orders')).status,
      (await core.readNamespacedSecret({ namespace: ns.name, name: 'orders-admin' })).metadata
        ?.resourceVersion,
      (await core.readNamespacedConfigMap({ namespace: ns.name, name: 'orders-config' })).metadata
        ?.resourceVersion,
      (await apps.readNamespacedStatefulSet({ namespace: ns.name, name: 'orders' })).metadata
        ?.resourceVersion,
    ];
    const before = await versions();
    const reconcilesBefore = await metricValue(
      operator,
      'settee_reconcile_total{controller="couch-instance",outcome="requeue"}',
    );
    // A label change passes the controller's predicate and triggers a full reconcile.
    await patchInstance(ns.name, 'orders', { metadata: { labels: { team: 'checkout' } } });
    await waitFor(
      'a reconcile after the label change',
      async () =>
        (await metricValue(
          operator,
          'settee_reconcile_total{controller="couch-instance",outcome="requeue"}',
        )) > reconcilesBefore
          ? true
          : undefined,
      { timeoutMs: 20_000 },
    );
    expect(await versions()).toEqual(before);
  });

  it('when kubectl lists and explains CouchInstances, then the columns and field documentation show', async () => {
    const plane = testControlPlane();
    const kubectl = (...args: string[]) =>
      run(plane.kubectl, ['--kubeconfig', plane.kubeconfigPath, ...args]);
    const { stdout: table } = await kubectl('get', 'couch', '-n', ns.name);
    expect(table.split('\n')[0]).toMatch(/^NAME\s+PHASE\s+PLAN\s+ENDPOINT\s+AGE$/);
    expect(table).toMatch(
      new RegExp(`orders\\s+Starting\\s+free\\s+http://127.0.0.1:8080/db/${ns.name}/orders`),
    );
    const { stdout: explained } = await kubectl('explain', 'couchinstance.spec.hibernation');
    expect(explained).toContain('idleAfter');
    expect(explained).toContain('How long an instance may see no activity before it hibernates');
  });
});
