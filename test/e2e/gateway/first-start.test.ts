import type { CouchInstance } from '../../../api/couch-instance.js';
import { createCouchInstance } from '../../helpers/gateway/gateway-harness.js';
import { basicAuth, request } from '../../helpers/gateway/http-request.js';
import {
  createServingInstance,
  readAdminCredentials,
  startTestPlatform,
  waitForInstance,
  type TestPlatform,
} from '../../helpers/gateway/platform-harness.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';

const isReady = (instance: CouchInstance): boolean =>
  instance.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/**
 * At an instance's first start Apache CouchDB answers /_up, and its pod turns Ready, before it has
 * made its system databases (docs/cold-start.md): a tenant must never see that window. The
 * platform: real operator, gateway and kubelet stand-in running the CouchDB release.
 */
describe('an instance at its first start', () => {
  const namespace = useTestNamespace('e2e-first-start');
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform({
      kubeConfig: testControlPlane().kubeConfig,
      namespace: namespace.name,
    });
  }, 60_000);
  afterAll(() => platform?.stop());

  /** What a tenant's first requests touch in _users: the database, and a login through _session. */
  async function usersAndLogin(endpoint: string, admin: { username: string; password: string }) {
    const [users, login] = await Promise.all([
      request(`${endpoint}/_users`, {
        headers: { Authorization: basicAuth(admin.username, admin.password) },
      }),
      request(`${endpoint}/_session`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: admin.username, password: admin.password }),
      }),
    ]);
    return { users: users.status, login: login.status };
  }

  it('when it is reported Ready, then _users and a _session login answer at once through the gateway', async () => {
    const ref = { namespace: namespace.name, name: 'ready-first' };
    const { endpoint, admin, instance } = await createServingInstance(testControlPlane().kubeConfig, ref, {
      plan: 'free',
    });
    expect(instance.status?.phase).toBe('Running');
    expect(await usersAndLogin(endpoint, admin)).toEqual({ users: 200, login: 200 });
  }, 90_000);

  it('when its first requests come while it starts, then the gateway holds them until _users answers', async () => {
    const { kubeConfig } = testControlPlane();
    const ref = { namespace: namespace.name, name: 'asked-first' };
    await createCouchInstance(kubeConfig, ref, { plan: 'free' });
    // As soon as the tenant has its endpoint and credentials, long before the engine is up.
    const starting = await waitForInstance(kubeConfig, ref, (i) => !!i.status?.endpoint && !isReady(i));
    const admin = await readAdminCredentials(kubeConfig, ref);
    expect(await usersAndLogin(starting.status?.endpoint ?? '', admin)).toEqual({ users: 200, login: 200 });
  }, 90_000);
});
