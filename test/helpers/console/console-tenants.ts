import crypto from 'node:crypto';
import { CoreV1Api, CustomObjectsApi, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import { COUCH_INSTANCE_PLURAL } from '../../../api/couch-instance.js';
import type { ConsoleServer } from '../../../console/console-server.js';
import { provisionConsoleIdentity, provisionTenant } from '../../../local/tenant-access.js';
import { testControlPlane } from '../kube.js';
import { createMemoryLogger, type MemoryLogger } from '../memory-logger.js';
import { startTestConsole } from './console-harness.js';

/** Where the CustomObjectsApi finds CouchInstances (add the namespace, and a name or a body). */
export const INSTANCE_REF = { group: SETTEE_GROUP, version: SETTEE_VERSION, plural: COUCH_INSTANCE_PLURAL };

/** A CouchInstance manifest named `name`, as a tenant would create it. */
export const couchInstanceBody = (name: string, spec: Record<string, unknown> = { plan: 'free' }) => ({
  apiVersion: `${SETTEE_GROUP}/${SETTEE_VERSION}`,
  kind: 'CouchInstance',
  metadata: { name },
  spec,
});

/** Creates the CouchInstance `name` in `namespace` as a tenant would: a free one unless `spec` says. */
export async function createCouchInstance(
  customObjects: CustomObjectsApi,
  instance: { namespace: string; name: string; spec?: Record<string, unknown> },
): Promise<void> {
  await customObjects.createNamespacedCustomObject({
    ...INSTANCE_REF,
    namespace: instance.namespace,
    body: couchInstanceBody(instance.name, instance.spec),
  });
}

/** What useConsoleTenants provides; the tokens and the server are set once beforeAll has run. */
export interface ConsoleTenants {
  tenantA: { namespace: string; serviceAccount: string };
  tenantB: { namespace: string; serviceAccount: string };
  tokenA: string;
  tokenB: string;
  /** The console's own ServiceAccount token: it may only create TokenReviews. */
  consoleToken: string;
  /** The console, logging into `memory`. */
  server: ConsoleServer;
  memory: MemoryLogger;
}

/**
 * Two tenants, each a ServiceAccount bound to the tenant Role in its own namespace (A has the
 * instance `alpha`; B has `bravo-secret-db` and its admin Secret), and a console running as its own
 * ServiceAccount, for a suite's lifetime: registers the suite's beforeAll and afterAll.
 */
export function useConsoleTenants(): ConsoleTenants {
  const { kubeConfig: admin } = testControlPlane();
  const core = admin.makeApiClient(CoreV1Api);
  const suffix = crypto.randomBytes(3).toString('hex');
  const consoleRef = { namespace: `console-sys-${suffix}`, serviceAccount: 'settee-console' };
  const tenants = {
    tenantA: { namespace: `console-a-${suffix}`, serviceAccount: 'alice' },
    tenantB: { namespace: `console-b-${suffix}`, serviceAccount: 'bob' },
    memory: createMemoryLogger('debug'),
  } as ConsoleTenants;

  beforeAll(async () => {
    const customObjects = admin.makeApiClient(CustomObjectsApi);
    tenants.tokenA = (await provisionTenant(admin, tenants.tenantA)).token;
    tenants.tokenB = (await provisionTenant(admin, tenants.tenantB)).token;
    await core.createNamespace({ body: { metadata: { name: consoleRef.namespace } } });
    tenants.consoleToken = await provisionConsoleIdentity(admin, consoleRef);
    for (const [namespace, name] of [
      [tenants.tenantA.namespace, 'alpha'],
      [tenants.tenantB.namespace, 'bravo-secret-db'],
    ] as const) {
      await createCouchInstance(customObjects, { namespace, name });
    }
    await core.createNamespacedSecret({
      namespace: tenants.tenantB.namespace,
      body: {
        metadata: { name: 'bravo-secret-db-admin' },
        stringData: { username: 'admin', password: 'b-password' },
      },
    });
    tenants.server = await startTestConsole({
      admin,
      consoleToken: tenants.consoleToken,
      logger: tenants.memory.logger,
      stream: { heartbeatMs: 500, retryMs: 200 },
    });
  }, 60_000);

  afterAll(async () => {
    await tenants.server?.stop();
    for (const name of [tenants.tenantA.namespace, tenants.tenantB.namespace, consoleRef.namespace])
      await core.deleteNamespace({ name }).catch(() => undefined);
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    const role = `settee-console-${consoleRef.namespace}-${consoleRef.serviceAccount}`;
    await rbac.deleteClusterRoleBinding({ name: role }).catch(() => undefined);
    await rbac.deleteClusterRole({ name: role }).catch(() => undefined);
  });

  return tenants;
}
