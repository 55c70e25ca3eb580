import type { V1ConfigMap, V1Container, V1EnvVar, V1Pod, V1Secret, V1Volume } from '@kubernetes/client-node';
import type { CouchDbContainer } from '../couch-engine/index.js';
import { IMAGE_ETC } from '../couch-engine/image-layout.js';
import { MissingEngineInputError, type PodReferences } from './pod-references.js';

/**
 * What a kubelet hands the `couchdb:3.x` container, read from the watch caches as a kubelet does
 * (nothing on the wake path waits for an API read): the files of the pod's ConfigMap, Secret and
 * projected volumes mounted under /opt/couchdb/etc (whole volumes or one key by subPath), and its
 * environment (values, and keys of Secrets and ConfigMaps). Missing references throw
 * MissingEngineInputError, which the pod shows while it waits, unless the reference is `optional`:
 * then, as a kubelet does, the volume or key is left out and the variable is not set.
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
  for (const variable of container.env ?? []) {
    const value = envValue(references, namespace, variable);
    if (value !== undefined) env[variable.name] = value;
  }
  return { etc, env };
}

/** The path under /opt/couchdb/etc, or undefined for a mount elsewhere (the data volume). */
function etcPath(mountPath: string): string | undefined {
  if (mountPath === IMAGE_ETC) return '';
  return mountPath.startsWith(`${IMAGE_ETC}/`) ? mountPath.slice(IMAGE_ETC.length + 1) : undefined;
}

type KeyPath = { key: string; path: string };
type Source = { kind: 'ConfigMap' | 'Secret'; name: string; optional: boolean; items?: KeyPath[] };
type Ref = { name?: string; optional?: boolean; items?: KeyPath[] };

function volumeFiles(references: PodReferences, namespace: string, volume: V1Volume): Map<string, string> {
  const sources: Source[] = [];
  const add = (kind: Source['kind'], ref: Ref | undefined, name = ref?.name): void => {
    if (ref && name) sources.push({ kind, name, optional: ref.optional === true, ...items(ref.items) });
  };
  add('ConfigMap', volume.configMap);
  add('Secret', volume.secret, volume.secret?.secretName);
  for (const source of volume.projected?.sources ?? []) {
    add('ConfigMap', source.configMap);
    add('Secret', source.secret);
  }
  const files = new Map<string, string>();
  for (const source of sources) {
    const data = sourceData(references, namespace, source);
    if (data === undefined) continue;
    const chosen = source.items ?? Object.keys(data).map((key) => ({ key, path: key }));
    for (const { key, path } of chosen) {
      const text = data[key];
      if (text !== undefined) files.set(path, text);
      else if (!source.optional)
        throw new MissingEngineInputError(`${source.kind} ${namespace}/${source.name} has no key ${key}`);
    }
  }
  return files;
}

function items(list: KeyPath[] | undefined): { items?: KeyPath[] } {
  return list ? { items: list } : {};
}

/** The source's keys as text, or undefined when it is optional and not there. */
function sourceData(
  references: PodReferences,
  namespace: string,
  source: { kind: 'ConfigMap' | 'Secret'; name: string; optional: boolean },
): Record<string, string> | undefined {
  const found =
    source.kind === 'ConfigMap'
      ? configMapData(references.configMap({ namespace, name: source.name }))
      : secretData(references.secret({ namespace, name: source.name }));
  if (found === undefined && !source.optional)
    throw new MissingEngineInputError(`${source.kind} ${namespace}/${source.name} is not there (yet)`);
  return found;
}

function configMapData(configMap: V1ConfigMap | undefined): Record<string, string> | undefined {
  if (!configMap) return undefined;
  return { ...decodeEach(configMap.binaryData ?? {}), ...configMap.data };
}

function secretData(secret: V1Secret | undefined): Record<string, string> | undefined {
  return secret ? decodeEach(secret.data ?? {}) : undefined;
}

// The engine's etc folder takes text files only (ini), so base64 values are read as UTF-8.
function decodeEach(encoded: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(encoded).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]),
  );
}

function envValue(references: PodReferences, namespace: string, variable: V1EnvVar): string | undefined {
  if (variable.valueFrom === undefined) return variable.value ?? '';
  const { secretKeyRef, configMapKeyRef } = variable.valueFrom;
  const keyRef = secretKeyRef ?? configMapKeyRef;
  if (!keyRef) {
    throw new MissingEngineInputError(
      `env ${variable.name}: the kubelet stand-in reads values and Secret or ConfigMap keys only`,
    );
  }
  const kind = secretKeyRef ? ('Secret' as const) : ('ConfigMap' as const);
  const ref = { kind, name: keyRef.name ?? '', optional: keyRef.optional === true };
  const value = sourceData(references, namespace, ref)?.[keyRef.key];
  if (value === undefined && !ref.optional)
    throw new MissingEngineInputError(
      `env ${variable.name}: ${kind} ${namespace}/${ref.name} has no key ${keyRef.key}`,
    );
  return value;
}
