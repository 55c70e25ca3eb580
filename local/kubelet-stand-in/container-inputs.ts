import type { V1Container, V1EnvVar, V1Pod, V1Volume } from '@kubernetes/client-node';
import type { CouchDbContainer } from '../couch-engine/index.js';
import { IMAGE_ETC } from '../couch-engine/image-layout.js';
import { MissingEngineInputError, type PodReferences } from './pod-references.js';

/**
 * What a kubelet hands the `couchdb:3.x` container, read from the watch caches as a kubelet does
 * (nothing on the wake path waits for an API read): the files of the pod's ConfigMap, Secret and
 * projected volumes mounted under /opt/couchdb/etc (whole volumes or one key by subPath), and its
 * environment (values, and keys of Secrets and ConfigMaps). Missing references throw
 * MissingEngineInputError, which the pod shows while it waits.
 */
export function readContainerInputs(references: PodReferences, pod: V1Pod): CouchDbContainer {
  const namespace = pod.metadata?.namespace ?? '';
  const container = pod.spec?.containers[0] as V1Container;
  const etc = new Map<string, string>();
  for (const mount of container.volumeMounts ?? []) {
    const target = etcPath(mount.mountPath);
    if (target === undefined) continue;
    const volume = pod.spec?.volumes?.find((v) => v.name === mount.name);
    if (!volume) throw new MissingEngineInputError(`volume ${mount.name} is not in the pod`);
    const files = volumeFiles(references, namespace, volume);
    if (mount.subPath) {
      const text = files.get(mount.subPath);
      if (text === undefined) {
        throw new MissingEngineInputError(
          `volume ${mount.name} has no ${mount.subPath} (subPath of ${mount.mountPath})`,
        );
      }
      etc.set(target, text);
    } else {
      for (const [file, text] of files) etc.set(target === '' ? file : `${target}/${file}`, text);
    }
  }
  const env: Record<string, string> = {};
  for (const variable of container.env ?? []) env[variable.name] = envValue(references, namespace, variable);
  return { etc, env };
}

/** The path under /opt/couchdb/etc, or undefined for a mount elsewhere (the data volume). */
function etcPath(mountPath: string): string | undefined {
  if (mountPath === IMAGE_ETC) return '';
  return mountPath.startsWith(`${IMAGE_ETC}/`) ? mountPath.slice(IMAGE_ETC.length + 1) : undefined;
}

type Source = { kind: 'ConfigMap' | 'Secret'; name: string; items?: Array<{ key: string; path: string }> };

function volumeFiles(references: PodReferences, namespace: string, volume: V1Volume): Map<string, string> {
  const sources: Source[] = [];
  if (volume.configMap?.name)
    sources.push({ kind: 'ConfigMap', name: volume.configMap.name, ...items(volume.configMap.items) });
  if (volume.secret?.secretName)
    sources.push({ kind: 'Secret', name: volume.secret.secretName, ...items(volume.secret.items) });
  for (const source of volume.projected?.sources ?? []) {
    if (source.configMap?.name)
      sources.push({ kind: 'ConfigMap', name: source.configMap.name, ...items(source.configMap.items) });
    if (source.secret?.name)
      sources.push({ kind: 'Secret', name: source.secret.name, ...items(source.secret.items) });
  }
  const files = new Map<string, string>();
  for (const source of sources) {
    const data = sourceData(references, namespace, source);
    const chosen = source.items ?? Object.keys(data).map((key) => ({ key, path: key }));
    for (const { key, path } of chosen) {
      const text = data[key];
      if (text === undefined)
        throw new MissingEngineInputError(`${source.kind} ${namespace}/${source.name} has no key ${key}`);
      files.set(path, text);
    }
  }
  return files;
}

function items(list: Array<{ key: string; path: string }> | undefined): {
  items?: Array<{ key: string; path: string }>;
} {
  return list ? { items: list } : {};
}

function sourceData(
  references: PodReferences,
  namespace: string,
  source: { kind: 'ConfigMap' | 'Secret'; name: string },
): Record<string, string> {
  if (source.kind === 'ConfigMap') {
    const configMap = references.configMap({ namespace, name: source.name });
    if (!configMap)
      throw new MissingEngineInputError(`ConfigMap ${namespace}/${source.name} is not there (yet)`);
    return { ...configMap.data };
  }
  const secret = references.secret({ namespace, name: source.name });
  if (!secret) throw new MissingEngineInputError(`Secret ${namespace}/${source.name} is not there (yet)`);
  return Object.fromEntries(
    Object.entries(secret.data ?? {}).map(([key, value]) => [
      key,
      Buffer.from(value, 'base64').toString('utf8'),
    ]),
  );
}

function envValue(references: PodReferences, namespace: string, variable: V1EnvVar): string {
  if (variable.valueFrom === undefined) return variable.value ?? '';
  const { secretKeyRef, configMapKeyRef } = variable.valueFrom;
  const ref = secretKeyRef
    ? { kind: 'Secret' as const, name: secretKeyRef.name ?? '', key: secretKeyRef.key }
    : configMapKeyRef
      ? { kind: 'ConfigMap' as const, name: configMapKeyRef.name ?? '', key: configMapKeyRef.key }
      : undefined;
  if (!ref) {
    throw new MissingEngineInputError(
      `env ${variable.name}: the kubelet stand-in reads values and Secret or ConfigMap keys only`,
    );
  }
  const value = sourceData(references, namespace, ref)[ref.key];
  if (value === undefined)
    throw new MissingEngineInputError(
      `env ${variable.name}: ${ref.kind} ${namespace}/${ref.name} has no key ${ref.key}`,
    );
  return value;
}
