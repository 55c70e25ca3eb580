import crypto from 'node:crypto';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { waitFor } from '../../../local/wait.js';
import type { RunningOperator } from '../../../operator/operator.js';
import { ADMIN_HASH_KEY } from '../../../operator/resources/couch-instance/admin-secret.js';
import { bindAdminHash } from '../../../operator/resources/couch-instance/admin-password-hash.js';
import { useTestNamespace } from '../../helpers/kube.js';
import {
  createInstance,
  ENGINE_START_MS,
  eventsFor,
  hasPhase,
  readInstance,
  recordInstanceVersions,
  requestWake,
  startTestKubelet,
  startTestOperator,
  testClients,
  waitForInstance,
} from '../../helpers/operator/couch-instance-harness.js';

/** Everything that makes up an instance's identity: its Secret's data and CouchDB's ini. */
async function identityOf(namespace: string, name: string) {
  const { core } = testClients();
  const secret = await core.readNamespacedSecret({ namespace, name: `${name}-admin` });
  const configMap = await core.readNamespacedConfigMap({ namespace, name: `${name}-config` });
  return { secret: secret.data, ini: configMap.data };
}

/**
 * The versions of the objects the operator server-side applies (of the StatefulSet, its spec's
 * generation): a new operator applies none that only it wrote (couch-instance-restart-writes.test.ts),
 * and an apply that changes nothing stores nothing. The admin Secret's content is identityOf's.
 */
async function resourceVersionsOf(namespace: string, name: string) {
  const { core, apps } = testClients();
  return [
    (await core.readNamespacedConfigMap({ namespace, name: `${name}-config` })).metadata?.resourceVersion,
    (await core.readNamespacedService({ namespace, name })).metadata?.resourceVersion,
    // The StatefulSet controller writes the StatefulSet's status (and so its resourceVersion)
    // whenever its pod changes; its generation moves only when its spec does.
    (await apps.readNamespacedStatefulSet({ namespace, name })).metadata?.generation,
  ];
}

/** A reconcile through a loaded API server: 20 s ran out once at load 60 (2026-11-28 12:24 UTC). */
const KEPT_HASH_WITHIN_MS = 60_000;
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const decode = (value: string | undefined) => Buffer.from(value ?? '', 'base64').toString('utf8');

/** The admin's hash in the instance's ini ([admins] <user> = <hash>). */
async function iniAdminHash(namespace: string, name: string): Promise<string | undefined> {
  const { core } = testClients();
  const ini = (await core.readNamespacedConfigMap({ namespace, name: `${name}-config` })).data?.[
    'settee.ini'
  ];
  return /^\[admins\]\n[^=]+= (\S+)$/m.exec(ini ?? '')?.[1];
}

describe('the CouchInstance controller across operator restarts', () => {
  const ns = useTestNamespace('couch-restart');
  let operator: RunningOperator | undefined;

  afterEach(async () => {
    await operator?.stop();
    operator = undefined;
  });

  it('when the operator stops in the middle of a burst and another starts, then every instance converges with one set of credentials', async () => {
    operator = await startTestOperator({ namespace: ns.name });
    const names = Array.from({ length: 30 }, (_, i) => `burst-${i}`);
    await Promise.all(names.map((name) => createInstance(ns.name, name, {})));
    const { core } = testClients();
    await waitFor(
      'the first admin Secret',
      async () =>
        (await core.listNamespacedSecret({ namespace: ns.name })).items.length > 0 ? true : undefined,
      { timeoutMs: 10_000, intervalMs: 10 },
    );
    await operator.stop();
    const before = new Map(
      (await core.listNamespacedSecret({ namespace: ns.name })).items.map((s) => [
        s.metadata?.name,
        s.data?.password,
      ]),
    );
    // The premise: the first operator stopped with part of the burst done (4 workers finish what they hold).
    expect(before.size).toBeLessThan(names.length);

    operator = await startTestOperator({ namespace: ns.name });
    for (const name of names) await waitForInstance(ns.name, name, 'phase Starting', hasPhase('Starting'));
    for (const [secretName, password] of before) {
      const after = await core.readNamespacedSecret({ namespace: ns.name, name: secretName ?? '' });
      expect(after.data?.password).toBe(password);
    }
    for (const name of names) {
      const created = (await eventsFor(ns.name, name)).filter(
        (event) => event.reason === 'CredentialsCreated',
      );
      expect(created).toHaveLength(1);
    }
    // Thirty instances reconciled in turn (each waited for up to the default) on a loaded machine.
  }, 120_000);

  it('when objects went missing while no operator ran, then the next operator recreates them with the same identity and leaves the rest alone', async () => {
    operator = await startTestOperator({ namespace: ns.name });
    await createInstance(ns.name, 'broken', {});
    await createInstance(ns.name, 'intact', {});
    await waitForInstance(ns.name, 'broken', 'phase Starting', hasPhase('Starting'));
    await waitForInstance(ns.name, 'intact', 'phase Starting', hasPhase('Starting'));
    const identity = await identityOf(ns.name, 'broken');
    const intactIdentity = await identityOf(ns.name, 'intact');
    const intactVersions = await resourceVersionsOf(ns.name, 'intact');
    await operator.stop();

    // As if the operator had died after writing the Secret and before the rest.
    const { core, apps } = testClients();
    await apps.deleteNamespacedStatefulSet({ namespace: ns.name, name: 'broken' });
    await core.deleteNamespacedConfigMap({ namespace: ns.name, name: 'broken-config' });
    await createInstance(ns.name, 'new-while-down', {});

    operator = await startTestOperator({ namespace: ns.name });
    await waitForInstance(ns.name, 'new-while-down', 'phase Starting', hasPhase('Starting'));
    await waitFor(
      'the StatefulSet of broken to be recreated',
      () => apps.readNamespacedStatefulSet({ namespace: ns.name, name: 'broken' }).then(() => true),
      // 20 s was short once at load 60, when a new operator still re-applied every instance first.
      { timeoutMs: 60_000 },
    );
    expect(await identityOf(ns.name, 'broken')).toEqual(identity);
    expect(await identityOf(ns.name, 'intact')).toEqual(intactIdentity);
    expect(await resourceVersionsOf(ns.name, 'intact')).toEqual(intactVersions);
  }, 120_000);
});

// Its own namespace: a new operator reconciles every instance it finds, and the burst above leaves 30.
describe('the admin hash kept in the Secret across operator restarts', () => {
  const ns = useTestNamespace('couch-kept-hash');
  let operator: RunningOperator | undefined;

  afterEach(async () => {
    await operator?.stop();
    operator = undefined;
  });

  it(
    'when a restarted operator finds the admin hash kept in the Secret, then it uses it without hashing, and a password edited by hand is hashed anew',
    async () => {
      operator = await startTestOperator({ namespace: ns.name });
      await createInstance(ns.name, 'kept', {});
      await waitForInstance(ns.name, 'kept', 'phase Starting', hasPhase('Starting'), KEPT_HASH_WITHIN_MS);
      const { core } = testClients();
      const secret = await core.readNamespacedSecret({ namespace: ns.name, name: 'kept-admin' });
      const password = decode(secret.data?.password);
      const hash = await iniAdminHash(ns.name, 'kept');
      expect(decode(secret.data?.[ADMIN_HASH_KEY])).toBe(bindAdminHash(hash ?? '', password));
      await operator.stop();

      // A hash no PBKDF2 run gives (its derived key replaced), bound to the password: only an operator
      // that takes the kept hash as it is writes it into the ini.
      const planted = (hash ?? '').replace(/-[0-9a-f]+,/, (key) => `-${'ab'.repeat((key.length - 2) / 2)},`);
      expect(planted).not.toBe(hash);
      await core.patchNamespacedSecret(
        {
          namespace: ns.name,
          name: 'kept-admin',
          body: { data: { [ADMIN_HASH_KEY]: base64(bindAdminHash(planted, password)) } },
        },
        mergePatch,
      );
      operator = await startTestOperator({ namespace: ns.name });
      await waitFor(
        'the kept hash in the ini',
        async () => ((await iniAdminHash(ns.name, 'kept')) === planted ? true : undefined),
        { timeoutMs: KEPT_HASH_WITHIN_MS, intervalMs: 100 },
      );

      // The password edited, the kept hash left as it was: it no longer fits, so it is made again.
      await core.patchNamespacedSecret(
        { namespace: ns.name, name: 'kept-admin', body: { data: { password: base64('edited-by-hand') } } },
        mergePatch,
      );
      const rehashed = await waitFor(
        'a new hash in the ini',
        async () => {
          const current = await iniAdminHash(ns.name, 'kept');
          return current !== planted ? current : undefined;
        },
        { timeoutMs: KEPT_HASH_WITHIN_MS, intervalMs: 100 },
      );
      const [derived, salt, iterations] = rehashed.replace(/^-pbkdf2:sha256-/, '').split(',');
      expect(
        crypto.pbkdf2Sync('edited-by-hand', salt ?? '', Number(iterations), 32, 'sha256').toString('hex'),
      ).toBe(derived);
      await waitFor(
        'the new hash kept in the Secret',
        async () => {
          const after = await core.readNamespacedSecret({ namespace: ns.name, name: 'kept-admin' });
          return decode(after.data?.[ADMIN_HASH_KEY]) === bindAdminHash(rehashed, 'edited-by-hand')
            ? true
            : undefined;
        },
        { timeoutMs: KEPT_HASH_WITHIN_MS, intervalMs: 100 },
      );
    },
    4 * KEPT_HASH_WITHIN_MS,
  );
});

// Its own namespace, with pods run by the kubelet stand-in (the burst above runs none).
describe('a CouchInstance across hibernation, wake and an operator restart', () => {
  const ns = useTestNamespace('couch-restart-wake');
  let operator: RunningOperator | undefined;
  let kubelet: { stop(): Promise<void> };

  beforeAll(async () => {
    kubelet = await startTestKubelet(ns.name);
  });
  afterAll(async () => {
    await operator?.stop();
    await kubelet?.stop();
  });

  it('when an instance hibernates, wakes and the operator restarts, then its credentials and CouchDB identity never change', async () => {
    operator = await startTestOperator({ namespace: ns.name });
    await createInstance(ns.name, 'sleeper', { hibernation: { idleAfter: '2s' } });
    await waitForInstance(
      ns.name,
      'sleeper',
      'its credentials',
      (i) => i.status?.credentialsSecret !== undefined,
    );
    const identity = await identityOf(ns.name, 'sleeper');
    const versions = await resourceVersionsOf(ns.name, 'sleeper');

    // Its engine process started by the kubelet stand-in, Ready, idle for 2 s, scaled to zero: each
    // step crosses processes, and 10 s ran out in a CI run under load.
    await waitForInstance(
      ns.name,
      'sleeper',
      'scaled to zero',
      (i) => i.status?.hibernatedAt !== undefined,
      ENGINE_START_MS,
    );
    // The StatefulSet controller deletes the pod and the kubelet stand-in stops its engine.
    await waitForInstance(ns.name, 'sleeper', 'phase Hibernated', hasPhase('Hibernated'), 60_000);
    // Waking ends by itself once the new pod is ready, which can be sooner than a poll: a watch
    // sees every version, so the operator is stopped once Waking was written, whenever that was.
    const watched = await recordInstanceVersions(ns.name, 'sleeper');
    try {
      await requestWake(ns.name, 'sleeper');
      await waitFor('phase Waking', async () => watched.versions.find(hasPhase('Waking')), {
        timeoutMs: 30_000,
      });
    } finally {
      watched.stop();
    }
    await operator.stop();

    operator = await startTestOperator({ namespace: ns.name });
    // The woken pod's engine may still be starting when the new operator starts.
    await waitForInstance(
      ns.name,
      'sleeper',
      'phase Running or later',
      (i) => i.status?.phase !== 'Waking',
      ENGINE_START_MS,
    );
    expect(await identityOf(ns.name, 'sleeper')).toEqual(identity);
    const [configVersion] = await resourceVersionsOf(ns.name, 'sleeper');
    expect(configVersion).toEqual(versions[0]);
    expect((await readInstance(ns.name, 'sleeper')).status?.credentialsSecret).toBe('sleeper-admin');
  }, 240_000);
});
