import fs from 'node:fs/promises';
import path from 'node:path';
import {
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { ANNOTATION_WAKE_REQUESTED, SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import { getFreePort } from '../../../local/ports.js';
import { waitFor } from '../../../local/wait.js';
import { testControlPlane } from '../../helpers/kube.js';
import { provisionTenant } from '../../../local/tenant-access.js';
import { packagesImportedFrom } from '../../helpers/image-layout.js';
import { entryOf, httpStatus, useImageTestbed } from '../../helpers/chart/image-testbed.js';

/*
 * No Docker engine runs here, so the images cannot be built. This suite does the next best thing:
 * it compiles dist/ as the Dockerfile's compile stage does, lays each image's files out as the
 * Dockerfile's COPY lines say, and starts each image's CMD with node, with the environment the
 * chart's Deployment gives the container and the chart's ServiceAccount's own token, against the
 * real API server. Only two things differ from a pod: the listen address is 127.0.0.1 on a free port
 * instead of 0.0.0.0 (this machine stays on loopback), and node_modules is the repository's
 * (a link), whose extra dev packages are made harmless by the import check.
 */

const PACKAGE_JSON = path.resolve('package.json');

interface PackageJson {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
}

describe('the images, as docker/Dockerfile lays them out', () => {
  const testbed = useImageTestbed();
  const { stage, imageRoot, launchImage, releaseNamespace, tenantNamespace } = testbed;

  it('when the Dockerfile compiles, then it runs `npm run compile` (tsc -p tsconfig.build.json) and installs production dependencies only', async () => {
    const pkg = JSON.parse(await fs.readFile(PACKAGE_JSON, 'utf8')) as PackageJson;
    expect(pkg.scripts.compile).toBe('tsc -p tsconfig.build.json');
    expect(stage('compile').runs).toContain('npm run compile && npm run build:web');
    expect(stage('production-dependencies').runs.join('\n')).toMatch(/npm ci --omit=dev/);
    for (const target of ['operator', 'gateway', 'console']) {
      expect(stage(target).base).toBe('shared');
      expect(stage('shared').base).toBe('runtime');
      expect(stage('runtime').base).toMatch(/^gcr\.io\/distroless\/nodejs\S*:nonroot$/);
    }
  });

  it("when each image's entry point is followed through its imports, then every file is in that image and every package is a production dependency", async () => {
    const pkg = JSON.parse(await fs.readFile(PACKAGE_JSON, 'utf8')) as PackageJson;
    const production = Object.keys(pkg.dependencies);
    for (const target of ['operator', 'gateway', 'console']) {
      const root = await imageRoot(target);
      const packages = await packagesImportedFrom(entryOf(stage(target), root));
      expect({ target, outsideProduction: packages.filter((name) => !production.includes(name)) }).toEqual({
        target,
        outsideProduction: [],
      });
      expect(packages).toContain('@kubernetes/client-node');
    }
    // Each image holds its own component and the shared folders, never another component.
    const components = ['operator', 'gateway', 'console'];
    for (const target of components) {
      const root = await imageRoot(target);
      for (const other of components.filter((c) => c !== target))
        await expect(fs.access(path.join(root, 'dist', other))).rejects.toThrow();
    }
    // The console's page is in its image, where its server looks for it.
    await fs.access(path.join(await imageRoot('console'), 'dist', 'console', 'web', 'dist', 'index.html'));
  });

  it("when the operator image runs with the chart's environment as its ServiceAccount, then it becomes Ready, leads, reconciles an instance, and exits 0 on SIGTERM", async () => {
    const port = await getFreePort();
    const operator = await launchImage({
      target: 'operator',
      deployment: `${testbed.release}-couch-operator`,
      serviceAccount: 'couch-operator-sa',
      listen: { SETTEE_METRICS_HOST: '127.0.0.1', SETTEE_METRICS_PORT: String(port) },
    });
    const fail = (err: Error): never => {
      throw new Error(`${err.message}\n--- operator output ---\n${operator.output()}`);
    };
    await waitFor(
      'the operator to be Ready and leading',
      async () => {
        if ((await httpStatus(`http://127.0.0.1:${port}/readyz`)) !== 200) return undefined;
        const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        return /^settee_leader 1$/m.test(metrics) ? true : undefined;
      },
      { timeoutMs: 30_000, abort: operator.exited },
    ).catch(fail);

    const { kubeConfig } = testControlPlane();
    await kubeConfig.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: SETTEE_GROUP,
      version: SETTEE_VERSION,
      namespace: tenantNamespace.name,
      plural: 'couchinstances',
      body: {
        apiVersion: `${SETTEE_GROUP}/${SETTEE_VERSION}`,
        kind: 'CouchInstance',
        metadata: { name: 'first' },
        spec: { plan: 'free' },
      },
    });
    const core = kubeConfig.makeApiClient(CoreV1Api);
    const apps = kubeConfig.makeApiClient(AppsV1Api);
    const customObjects = kubeConfig.makeApiClient(CustomObjectsApi);
    await waitFor(
      "the instance's admin Secret, StatefulSet and status",
      async () => {
        await core.readNamespacedSecret({ name: 'first-admin', namespace: tenantNamespace.name });
        await apps.readNamespacedStatefulSet({ name: 'first', namespace: tenantNamespace.name });
        const instance = (await customObjects.getNamespacedCustomObject({
          group: SETTEE_GROUP,
          version: SETTEE_VERSION,
          namespace: tenantNamespace.name,
          plural: 'couchinstances',
          name: 'first',
        })) as { status?: { observedGeneration?: number; endpoint?: string } };
        return instance.status?.observedGeneration === 1 ? instance.status : undefined;
      },
      { timeoutMs: 30_000, abort: operator.exited },
    )
      .then((status) =>
        expect(status.endpoint).toBe(`https://first.${tenantNamespace.name}.couch.example.com`),
      )
      .catch(fail);

    process.kill(operator.pid, 'SIGTERM');
    expect(await operator.exited).toBe(0);
    expect(operator.output()).not.toMatch(/forbidden/i);
  }, 90_000);

  it("when the gateway image runs with the chart's environment as its ServiceAccount, then it becomes Ready, asks a hibernated instance to wake, renews its activity Lease, and exits 0 on SIGTERM", async () => {
    const port = await getFreePort();
    const gateway = await launchImage({
      target: 'gateway',
      deployment: `${testbed.release}-couch-gateway`,
      serviceAccount: 'couch-gateway-sa',
      listen: { SETTEE_GATEWAY_HOST: '127.0.0.1', SETTEE_GATEWAY_PORT: String(port) },
    });
    const fail = (err: Error): never => {
      throw new Error(`${err.message}\n--- gateway output ---\n${gateway.output()}`);
    };
    await waitFor(
      'the gateway to be Ready',
      async () => ((await httpStatus(`http://127.0.0.1:${port}/readyz`)) === 200 ? true : undefined),
      {
        timeoutMs: 30_000,
        abort: gateway.exited,
      },
    ).catch(fail);

    // An instance the operator (not running now) hibernated ten seconds ago.
    const { kubeConfig } = testControlPlane();
    const customObjects = kubeConfig.makeApiClient(CustomObjectsApi);
    const ref = {
      group: SETTEE_GROUP,
      version: SETTEE_VERSION,
      namespace: tenantNamespace.name,
      plural: 'couchinstances',
    };
    await customObjects.createNamespacedCustomObject({
      ...ref,
      body: {
        apiVersion: `${SETTEE_GROUP}/${SETTEE_VERSION}`,
        kind: 'CouchInstance',
        metadata: { name: 'sleepy' },
        spec: { plan: 'free' },
      },
    });
    await customObjects.patchNamespacedCustomObjectStatus(
      {
        ...ref,
        name: 'sleepy',
        body: { status: { phase: 'Hibernated', hibernatedAt: new Date(Date.now() - 10_000).toISOString() } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );

    const held = new AbortController();
    const request = fetch(`http://127.0.0.1:${port}/db/${tenantNamespace.name}/sleepy/`, {
      signal: held.signal,
    }).catch(() => undefined);
    const leases = kubeConfig.makeApiClient(CoordinationV1Api);
    try {
      const requested = await waitFor(
        'the wake request',
        async () => {
          const instance = (await customObjects.getNamespacedCustomObject({
            ...ref,
            name: 'sleepy',
          })) as KubernetesObject;
          return instance.metadata?.annotations?.[ANNOTATION_WAKE_REQUESTED];
        },
        // Its informer sees the instance, then it writes the annotation.
        { timeoutMs: 30_000, abort: gateway.exited },
      ).catch(fail);
      expect(Date.parse(requested)).toBeGreaterThan(0);
      // The Lease is not renewed while the instance wakes; once the operator reports it Running,
      // the held request's activity is (within an interval, 5 s here).
      await customObjects.patchNamespacedCustomObjectStatus(
        { ...ref, name: 'sleepy', body: { status: { phase: 'Running' } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      const holder = await waitFor(
        'the activity Lease',
        async () =>
          (await leases.readNamespacedLease({ name: 'sleepy-activity', namespace: tenantNamespace.name }))
            .spec?.holderIdentity,
        { timeoutMs: 30_000, abort: gateway.exited },
      ).catch(fail);
      expect(holder).toBe(`${testbed.release}-couch-gateway-image-test`);
    } finally {
      held.abort();
      await request;
    }

    process.kill(gateway.pid, 'SIGTERM');
    expect(await gateway.exited).toBe(0);
    expect(gateway.output()).not.toMatch(/forbidden/i);
  }, 90_000);

  it("when the console image runs with the chart's environment as its ServiceAccount, then it serves its page, signs a tenant in by TokenReview, lists only what the tenant's token may read, and exits 0 on SIGTERM", async () => {
    const port = await getFreePort();
    // Its session secret comes from the Secret the chart generates, as the kubelet resolves it.
    const { kubeConfig } = testControlPlane();
    const consoleProcess = await launchImage({
      target: 'console',
      deployment: `${testbed.release}-couch-console`,
      serviceAccount: 'couch-console-sa',
      listen: { SETTEE_CONSOLE_HOST: '127.0.0.1', SETTEE_CONSOLE_PORT: String(port) },
    });
    const fail = (err: Error): never => {
      throw new Error(`${err.message}\n--- console output ---\n${consoleProcess.output()}`);
    };
    const base = `http://127.0.0.1:${port}`;
    await waitFor(
      'the console to be Ready',
      async () => ((await httpStatus(`${base}/readyz`)) === 200 ? true : undefined),
      {
        timeoutMs: 30_000,
        abort: consoleProcess.exited,
      },
    ).catch(fail);
    const page = await fetch(`${base}/instances`);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(
      /<script type="module" crossorigin src="\/assets\/index-[^"]+\.js"><\/script>/,
    );

    const tenant = await provisionTenant(kubeConfig, {
      namespace: tenantNamespace.name,
      serviceAccount: 'image-tenant',
    });
    const signIn = await fetch(`${base}/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base },
      body: JSON.stringify({ token: tenant.token }),
    });
    expect(signIn.status).toBe(201);
    const cookie = (signIn.headers.getSetCookie()[0] ?? '').split(';')[0] ?? '';
    const own = await fetch(`${base}/api/namespaces/${tenantNamespace.name}/instances`, {
      headers: { cookie },
    });
    expect(own.status).toBe(200);
    const other = await fetch(`${base}/api/namespaces/${releaseNamespace.name}/instances`, {
      headers: { cookie },
    });
    expect(other.status).toBe(403);

    process.kill(consoleProcess.pid, 'SIGTERM');
    expect(await consoleProcess.exited).toBe(0);
    expect(consoleProcess.output()).not.toContain(tenant.token);
  });
});
