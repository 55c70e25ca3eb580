import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { KubernetesObject, V1Deployment, V1EnvVar, V1Secret } from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';
import { testControlPlane } from '../kube.js';

/** The chart under test and the values file that sets every value to something not the default. */
export const CHART_DIR = path.resolve('charts/settee');
export const FULL_VALUES = path.resolve('test/integration/chart/full-values.yaml');

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

export class CommandFailedError extends Error {
  readonly code = 'COMMAND_FAILED';
  constructor(
    readonly command: string,
    readonly result: CommandResult,
  ) {
    super(`${command} exited ${result.code}:\n${result.stderr || result.stdout}`);
    this.name = 'CommandFailedError';
  }
}

/**
 * Helm's own cache, config and data folders, in one temporary folder per test process, so the suite
 * neither reads nor writes the user's ~/.config/helm.
 */
let helmHome: Promise<string> | undefined;
function helmEnv(): Promise<NodeJS.ProcessEnv> {
  helmHome ??= fs.mkdtemp(path.join(os.tmpdir(), 'settee-helm-home-'));
  return helmHome.then((home) => ({
    PATH: process.env.PATH,
    HOME: home,
    HELM_CACHE_HOME: path.join(home, 'cache'),
    HELM_CONFIG_HOME: path.join(home, 'config'),
    HELM_DATA_HOME: path.join(home, 'data'),
    KUBECONFIG: testControlPlane().kubeconfigPath,
  }));
}

/** Runs a short-lived command to completion; a non-zero exit is a result, not an error. */
export function runCommand(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  input?: string,
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      args,
      { env, maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') {
          reject(err);
          return;
        }
        resolve({ code: typeof err?.code === 'number' ? err.code : 0, stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** helm, as built by local/tools/build-kube-tools.sh, against this worker's control plane. */
export async function helm(args: string[]): Promise<CommandResult> {
  return runCommand(testControlPlane().helm, args, await helmEnv());
}

/** kubectl against this worker's control plane, with a discovery cache of its own (CRDs come and go). */
export async function kubectl(args: string[], input?: string): Promise<CommandResult> {
  const env = await helmEnv();
  const plane = testControlPlane();
  return runCommand(
    plane.kubectl,
    [
      '--kubeconfig',
      plane.kubeconfigPath,
      '--cache-dir',
      path.join(env.HOME ?? os.tmpdir(), 'kube-cache'),
      ...args,
    ],
    env,
    input,
  );
}

export function succeeded(command: string, result: CommandResult): CommandResult {
  if (result.code !== 0) throw new CommandFailedError(command, result);
  return result;
}

export interface RenderOptions {
  release: string;
  namespace: string;
  valuesFiles?: string[];
  /** --set key=value pairs. */
  set?: Record<string, string>;
  includeCrds?: boolean;
}

/** `helm template` arguments for these options (without the leading `template`). */
export function templateArgs(options: RenderOptions): string[] {
  return [
    options.release,
    CHART_DIR,
    '--namespace',
    options.namespace,
    ...(options.includeCrds ? ['--include-crds'] : []),
    ...(options.valuesFiles ?? []).flatMap((file) => ['--values', file]),
    ...Object.entries(options.set ?? {}).flatMap(([key, value]) => ['--set', `${key}=${value}`]),
  ];
}

/** `helm template` output as YAML text; throws with helm's message when rendering fails. */
async function renderChartYaml(options: RenderOptions): Promise<string> {
  return succeeded('helm template', await helm(['template', ...templateArgs(options)])).stdout;
}

function parseManifests(yamlText: string): KubernetesObject[] {
  return parseAllDocuments(yamlText)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`helm rendered invalid YAML: ${doc.errors[0]?.message}`);
      return doc.toJS() as KubernetesObject | null;
    })
    .filter((object): object is KubernetesObject => object !== null);
}

export async function renderChart(options: RenderOptions): Promise<KubernetesObject[]> {
  return parseManifests(await renderChartYaml(options));
}

/** The one rendered object of this kind whose name matches; throws naming what was there instead. */
export function findObject<T extends KubernetesObject>(
  objects: readonly KubernetesObject[],
  kind: string,
  name?: string | RegExp,
): T {
  const matches = objects.filter(
    (o) =>
      o.kind === kind &&
      (name === undefined ||
        (typeof name === 'string' ? o.metadata?.name === name : name.test(o.metadata?.name ?? ''))),
  );
  if (matches.length !== 1) {
    const names = objects.map((o) => `${o.kind}/${o.metadata?.name}`).join(', ');
    throw new Error(`expected one ${kind} ${name ?? ''}, found ${matches.length} among: ${names}`);
  }
  return matches[0] as T;
}

/** A release name of its own per test, so cluster-scoped objects (ClusterRoles) never collide. */
export function uniqueRelease(prefix: string): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
}

export function toYamlStream(objects: readonly KubernetesObject[]): string {
  return objects.map((object) => stringify(object)).join('---\n');
}

/** Stores the objects for real, with server-side apply under helm's name (as an install would). */
export async function applyManifests(objects: readonly KubernetesObject[]): Promise<void> {
  succeeded(
    'kubectl apply',
    await kubectl(['apply', '--server-side', '--field-manager=helm', '-f', '-'], toYamlStream(objects)),
  );
}

/** Deletes the cluster-scoped objects among these (namespaced ones go with their test namespace). */
export async function deleteClusterScoped(objects: readonly KubernetesObject[]): Promise<void> {
  const names = objects
    .filter((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding')
    .map((o) => `${o.kind?.toLowerCase()}/${o.metadata?.name}`);
  if (names.length > 0) await kubectl(['delete', '--ignore-not-found', ...names]);
}

/**
 * A Deployment's container environment as the kubelet resolves it for a pod named `podName` in
 * `namespace`: plain values, the pod's name and namespace, and keys of Secrets the chart rendered.
 */
export function containerEnvironment(options: {
  deployment: V1Deployment;
  objects: readonly KubernetesObject[];
  podName: string;
  namespace: string;
}): Record<string, string> {
  const resolve = (entry: V1EnvVar): string => {
    if (entry.value !== undefined) return entry.value;
    const field = entry.valueFrom?.fieldRef?.fieldPath;
    if (field === 'metadata.name') return options.podName;
    if (field === 'metadata.namespace') return options.namespace;
    const secretRef = entry.valueFrom?.secretKeyRef;
    if (secretRef) {
      const secret = findObject<V1Secret>(options.objects, 'Secret', secretRef.name);
      return Buffer.from(secret.data?.[secretRef.key] ?? '', 'base64').toString();
    }
    throw new Error(`cannot resolve env ${entry.name}: ${JSON.stringify(entry.valueFrom)}`);
  };
  const env: Record<string, string> = {};
  for (const entry of options.deployment.spec?.template.spec?.containers[0]?.env ?? [])
    env[entry.name] = resolve(entry);
  return env;
}
