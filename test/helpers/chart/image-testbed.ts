/**
 * The set-up of image-entrypoints.test.ts: dist/ compiled as the Dockerfile's compile stage does,
 * the chart rendered for one release with its RBAC applied, and each image laid out as the
 * Dockerfile's COPY lines say and started with node as the chart's Deployment starts its container.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  KubeConfig,
  RbacAuthorizationV1Api,
  type KubernetesObject,
  type V1Deployment,
} from '@kubernetes/client-node';
import { startProcess, type ManagedProcess } from '../../../local/process.js';
import { testControlPlane, useTestNamespace } from '../kube.js';
import { ensureWebBuild } from '../console/console-harness.js';
import { layOutImage, readDockerfile, type ImageStage } from '../image-layout.js';
import {
  applyManifests,
  containerEnvironment,
  findObject,
  FULL_VALUES,
  kubectl,
  renderChart,
  succeeded,
  uniqueRelease,
} from './chart-harness.js';

const DOCKERFILE = path.resolve('docker/Dockerfile');
/** Compiling dist/ took over 60 s here at load 30-40 (2 cores). */
const COMPILE_TIMEOUT_MS = 240_000;

/**
 * `npm run compile`, with the type check left to `npm run build` (the emitted JavaScript is the same).
 * Not through runCommand: its 60 s bound for short commands is too short for compiling the whole
 * project on a loaded machine (it was killed at load 30-40, failing every test of the suite).
 */
async function compileDist(outDir: string): Promise<void> {
  const tsc = path.resolve('node_modules/typescript/bin/tsc');
  await promisify(execFile)(
    process.execPath,
    [tsc, '-p', 'tsconfig.build.json', '--outDir', outDir, '--noCheck'],
    {
      env: { PATH: process.env.PATH },
      maxBuffer: 64 * 1024 * 1024,
      timeout: COMPILE_TIMEOUT_MS,
    },
  );
}

export function entryOf(target: ImageStage, root: string): string {
  const script = target.cmd.find((arg) => arg.endsWith('.js'));
  if (!script)
    throw new Error(`the ${target.name} image's CMD names no script: ${JSON.stringify(target.cmd)}`);
  return path.join(root, script);
}

export async function httpStatus(url: string): Promise<number | undefined> {
  return fetch(url).then(
    (response) => response.status,
    () => undefined,
  );
}

export interface ImageTestbed {
  /** The chart's release namespace (its ServiceAccounts, Roles and RoleBindings). */
  readonly releaseNamespace: { readonly name: string };
  /** The one namespace the processes watch. */
  readonly tenantNamespace: { readonly name: string };
  /** The release name the chart was rendered with. */
  readonly release: string;
  stage(name: string): ImageStage;
  /** Lays an image target out afresh; returns its root (the image's WORKDIR). */
  imageRoot(target: string): Promise<string>;
  /**
   * Starts an image's CMD with the environment the chart's Deployment gives the container and the
   * ServiceAccount's own token, listening where `listen` says; it is stopped after the test.
   */
  launchImage(options: {
    target: string;
    deployment: string;
    serviceAccount: string;
    listen: Record<string, string>;
  }): Promise<ManagedProcess>;
}

/** Registers the suite's hooks (set-up in beforeAll, each test's processes stopped after it). */
export function useImageTestbed(): ImageTestbed {
  const releaseNamespace = useTestNamespace('chart-image');
  const tenantNamespace = useTestNamespace('chart-image-tenant');
  const running: ManagedProcess[] = [];
  let workDir: string;
  let stages: Map<string, ImageStage>;
  let rendered: KubernetesObject[];
  let release: string;
  let consoleClusterRbac: KubernetesObject[] = [];

  function stage(name: string): ImageStage {
    const found = stages.get(name);
    if (!found) throw new Error(`docker/Dockerfile has no stage ${name}`);
    return found;
  }

  /** Lays an image target out under workDir/<target>; returns its root (the image's WORKDIR). */
  async function imageRoot(target: string): Promise<string> {
    const root = path.join(workDir, 'images', target);
    await fs.rm(root, { recursive: true, force: true });
    await layOutImage({
      target: stage(target),
      root,
      sourceOf: (copy) => {
        if (copy.from === 'compile' && copy.source.startsWith('/src/dist/'))
          return path.join(workDir, 'compile', 'dist', copy.source.slice('/src/dist/'.length));
        // The console's page, built by Vite in the compile stage (npm run build:web).
        if (copy.from === 'compile' && copy.source === '/src/console/web/dist')
          return path.resolve('console/web/dist');
        if (copy.from === 'production-dependencies' && copy.source.startsWith('/app/'))
          return path.resolve(copy.source.slice('/app/'.length));
        throw new Error(`no local source for COPY --from=${copy.from} ${copy.source}`);
      },
    });
    return root;
  }

  /** A kubeconfig that authenticates as the ServiceAccount, with a token from the TokenRequest API. */
  async function serviceAccountKubeconfig(serviceAccount: string): Promise<string> {
    const token = succeeded(
      'kubectl create token',
      await kubectl([
        'create',
        'token',
        serviceAccount,
        '--namespace',
        releaseNamespace.name,
        '--duration',
        '1h',
      ]),
    ).stdout.trim();
    const cluster = testControlPlane().kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the test kubeconfig names no cluster');
    const config = new KubeConfig();
    config.loadFromOptions({
      clusters: [cluster],
      users: [{ name: serviceAccount, token }],
      contexts: [{ name: serviceAccount, cluster: cluster.name, user: serviceAccount }],
      currentContext: serviceAccount,
    });
    const file = path.join(workDir, `${serviceAccount}.kubeconfig`);
    await fs.writeFile(file, config.exportConfig(), { mode: 0o600 });
    return file;
  }

  async function launchImage(options: {
    target: string;
    deployment: string;
    serviceAccount: string;
    listen: Record<string, string>;
  }): Promise<ManagedProcess> {
    const target = stage(options.target);
    const root = await imageRoot(options.target);
    const deployment = findObject<V1Deployment>(rendered, 'Deployment', options.deployment);
    return startProcess({
      name: options.target,
      command: process.execPath,
      args: target.cmd,
      cwd: root,
      env: {
        PATH: process.env.PATH,
        HOME: workDir,
        ...target.env,
        ...containerEnvironment({
          deployment,
          objects: rendered,
          podName: `${options.deployment}-image-test`,
          namespace: releaseNamespace.name,
        }),
        ...options.listen,
        KUBECONFIG: await serviceAccountKubeconfig(options.serviceAccount),
      },
    });
  }

  beforeAll(async () => {
    await ensureWebBuild();
    workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-images-'));
    stages = await readDockerfile(DOCKERFILE);
    await compileDist(path.join(workDir, 'compile', 'dist'));
    release = uniqueRelease('img');
    rendered = await renderChart({
      release,
      namespace: releaseNamespace.name,
      valuesFiles: [FULL_VALUES],
      // One watched namespace keeps the processes off other suites' objects; the gateway's own
      // certificate is off because no Secret backs it here. A short drain: the gateway keeps an
      // idle keep-alive connection open to the end of its drain time, and 25 s would slow the suite.
      set: {
        watchNamespace: tenantNamespace.name,
        'gateway.tls.existingSecret': '',
        'gateway.shutdownTimeoutSeconds': '2',
      },
    });
    const rbacKinds = new Set(['ServiceAccount', 'Role', 'RoleBinding']);
    await applyManifests(rendered.filter((o) => rbacKinds.has(o.kind ?? '')));
    // The console's TokenReview grant is cluster-scoped (named after this release; removed in afterAll).
    consoleClusterRbac = rendered.filter(
      (o) =>
        o.kind?.startsWith('Cluster') && o.metadata?.labels?.['app.kubernetes.io/component'] === 'console',
    );
    await applyManifests(consoleClusterRbac);
  }, COMPILE_TIMEOUT_MS + 120_000);

  afterEach(async () => {
    await Promise.all(running.splice(0).map((child) => child.stop(5_000)));
  });

  afterAll(async () => {
    const rbac = testControlPlane().kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    for (const object of consoleClusterRbac) {
      const name = object.metadata?.name ?? '';
      if (object.kind === 'ClusterRole') await rbac.deleteClusterRole({ name }).catch(() => undefined);
      else await rbac.deleteClusterRoleBinding({ name }).catch(() => undefined);
    }
    if (workDir) await fs.rm(workDir, { recursive: true, force: true });
  });

  return {
    releaseNamespace,
    tenantNamespace,
    get release() {
      return release;
    },
    stage,
    imageRoot,
    async launchImage(options) {
      const child = await launchImage(options);
      running.push(child);
      return child;
    },
  };
}
