import http from 'node:http';
import { COUCHDB_PORT } from '../../../api/contract.js';
import type { CouchInstance } from '../../../api/couch-instance.js';
import { allocatePodAddress } from '../../../local/kubelet-stand-in/loopback-address.js';
import type { RunningOperator } from '../../../operator/operator.js';
import { useTestNamespace } from '../../helpers/kube.js';
import {
  conditionOf,
  createInstance,
  hasPhase,
  reportPodReady,
  startTestOperator,
  waitForInstance,
} from '../../helpers/operator/couch-instance-harness.js';

const readyMessage = (instance: CouchInstance): string => conditionOf(instance, 'Ready')?.message ?? '';

/**
 * At a first start Apache CouchDB answers /_up, and its pod turns Ready, before it has made its
 * system databases (docs/cold-start.md). Here the instance's CouchDB is a test server that makes
 * them when the test says so (no kubelet stand-in: the test reports the pod Ready at the server's
 * address), so the operator's check is seen on each side of the moment they appear.
 */
describe('an instance whose CouchDB answers before its system databases exist', () => {
  const ns = useTestNamespace('couch-system-dbs');
  const name = 'fresh';
  const existing = new Set<string>();
  let operator: RunningOperator;
  let engine: http.Server;
  let podIP: string;

  beforeAll(async () => {
    engine = http.createServer((req, res) => {
      const path = req.url ?? '';
      const missing = (path === '/_users' || path === '/_replicator') && !existing.has(path.slice(1));
      res.writeHead(missing ? 404 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(missing ? { error: 'not_found', reason: 'Database does not exist.' } : {}));
    });
    podIP = await allocatePodAddress(COUCHDB_PORT, new Set());
    await new Promise<void>((resolve) => engine.listen(COUCHDB_PORT, podIP, resolve));
    operator = await startTestOperator({ namespace: ns.name });
  });
  afterAll(async () => {
    await operator?.stop();
    await new Promise((resolve) => engine.close(resolve));
  });

  it('when its pod is Ready but _users or _replicator is missing, then it stays Starting and Ready says which, until both answer', async () => {
    await createInstance(ns.name, name, {});
    await waitForInstance(ns.name, name, 'phase Starting', hasPhase('Starting'));
    await reportPodReady(ns.name, name, podIP);
    const neither = await waitForInstance(ns.name, name, 'Ready naming _users', (instance) =>
      readyMessage(instance).includes('_users does not exist yet'),
    );
    expect(neither.status?.phase).toBe('Starting');
    expect(conditionOf(neither, 'Ready')?.status).toBe('False');

    existing.add('_users');
    const one = await waitForInstance(
      ns.name,
      name,
      'Ready naming only _replicator',
      (instance) =>
        !readyMessage(instance).includes('_users') && readyMessage(instance).includes('_replicator'),
    );
    expect(one.status?.phase).toBe('Starting');

    // Nothing in the cluster changes when CouchDB makes them: the operator's recheck finds it.
    existing.add('_replicator');
    const running = await waitForInstance(ns.name, name, 'phase Running', hasPhase('Running'));
    expect(conditionOf(running, 'Ready')?.status).toBe('True');
  }, 60_000);
});
