import type { EtcFiles } from './image-entrypoint.js';

/** Where the official image installs CouchDB: the paths pods mount files at. */
export const IMAGE_COUCHDB_ROOT = '/opt/couchdb';
export const IMAGE_ETC = `${IMAGE_COUCHDB_ROOT}/etc`;
export const IMAGE_DATA = `${IMAGE_COUCHDB_ROOT}/data`;

/**
 * The files the image adds to the release's etc/: default.d/10-docker-default.ini, which makes
 * CouchDB listen on every interface. (The stand-in then binds the pod's own address instead, the
 * one thing a container runtime gives differently: see runtimeIni.)
 */
const IMAGE_DEFAULT_D: ReadonlyArray<[string, string]> = [
  ['default.d/10-docker-default.ini', '[chttpd]\nbind_address = any\n'],
];

/**
 * The image's vm.args, derived from the release's own: the image names no node (NODENAME does, see
 * image-entrypoint.ts) and turns schedulers' busy waiting off (+sbwt none, +sbwtdcpu none,
 * +sbwtdio none), since a container's CPU quota would be spent spinning.
 */
export function imageVmArgs(releaseVmArgs: string): string {
  const lines = releaseVmArgs
    .split('\n')
    .filter((line) => !/^\s*-s?name\s/.test(line))
    .map((line) => line.replace(/^#(\+sbwt(dcpu|dio)? none)\s*$/, '$1'));
  for (const flag of ['+sbwt none', '+sbwtdcpu none', '+sbwtdio none']) {
    if (!lines.some((line) => line.trim() === flag)) lines.push(flag);
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

/**
 * The container's etc/: the release's local.ini and vm.args as the image has them, its default.d
 * file, and the pod's mounted files laid over them (a mount replaces the file at its path).
 */
export function buildImageEtc(input: {
  releaseLocalIni: string;
  releaseVmArgs: string;
  mounted: EtcFiles;
}): Map<string, string> {
  const etc = new Map<string, string>([
    ['local.ini', input.releaseLocalIni],
    ['vm.args', imageVmArgs(input.releaseVmArgs)],
    ...IMAGE_DEFAULT_D,
  ]);
  for (const [file, text] of input.mounted) etc.set(file, text);
  return etc;
}

/**
 * What a container runtime gives the container differently here, as ini settings read after the
 * pod's own files (and before docker.ini, where CouchDB writes runtime changes): the pod's own
 * loopback address instead of every interface, and the pod's data volume where the image mounts it
 * (/opt/couchdb/data, the release's ./data). An engine outside a pod also gets its own port, as a
 * published container port would be.
 */
export function runtimeIni(input: { podIP: string; dataDir: string; port?: number }): string {
  return [
    '; The kubelet stand-in: what the container runtime gives this pod (its address, its volume).',
    '[chttpd]',
    `bind_address = ${input.podIP}`,
    ...(input.port === undefined ? [] : [`port = ${input.port}`]),
    '',
    '[couchdb]',
    `database_dir = ${input.dataDir}`,
    `view_index_dir = ${input.dataDir}`,
    '',
  ].join('\n');
}
