import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CouchEngineUnavailableError } from './errors.js';

/** A release tarball or an unpacked release folder to run instead of ../shared/engines/; `none` for none. */
export const COUCHDB_RELEASE_ENV = 'SETTEE_COUCHDB_RELEASE';
/** The folder the release in ../shared/engines/ unpacks to (local/tools/unpack-couchdb-release.sh). */
export const DEFAULT_RELEASE_FOLDER = 'couchdb-3.5.2';
/** What `make deps` runs; it checks the sha256 and unpacks once. */
export const UNPACK_COMMAND = 'bash local/tools/unpack-couchdb-release.sh';

const UNPACK_SCRIPT = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'tools',
  'unpack-couchdb-release.sh',
);
const STAMP = '.settee-release-sha256';

/** An unpacked Apache CouchDB release: the layout of the official image's /opt/couchdb. */
export interface CouchDbRelease {
  root: string;
  bin: string;
}

const located = new Map<string, CouchDbRelease | undefined>();

/**
 * The Apache CouchDB release this machine runs, or undefined when there is none (the pouchdb-server
 * stand-in serves then). SETTEE_COUCHDB_RELEASE names one (a folder is used as it is, a tarball is
 * unpacked into the cache); otherwise the release `make deps` unpacked from ../shared/engines/, or
 * that tarball unpacked now. Looked up once per process and setting.
 */
export function locateCouchDbRelease(env: NodeJS.ProcessEnv = process.env): CouchDbRelease | undefined {
  const setting = env[COUCHDB_RELEASE_ENV] ?? '';
  const cacheRoot = env.SETTEE_CACHE_DIR || path.join(os.homedir(), '.cache', 'settee');
  const key = `${setting}\0${cacheRoot}\0${env.SETTEE_SHARED_ENGINES_DIR ?? ''}`;
  if (!located.has(key)) located.set(key, locate(setting, cacheRoot, env));
  return located.get(key);
}

function locate(setting: string, cacheRoot: string, env: NodeJS.ProcessEnv): CouchDbRelease | undefined {
  if (setting === 'none') return undefined;
  if (setting !== '' && isRelease(setting)) return release(setting);
  const unpacked = path.join(cacheRoot, DEFAULT_RELEASE_FOLDER);
  // make deps checked and unpacked it: no second sha256 of 50 MB in every process.
  if (
    setting === '' &&
    !env.SETTEE_SHARED_ENGINES_DIR &&
    isRelease(unpacked) &&
    fs.existsSync(path.join(unpacked, STAMP))
  ) {
    return release(unpacked);
  }
  const result = spawnSync('bash', [UNPACK_SCRIPT], {
    env: { ...env, SETTEE_CACHE_DIR: cacheRoot },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const folder = result.stdout?.trim().split('\n').pop() ?? '';
  if (result.status !== 0) {
    throw new CouchEngineUnavailableError(
      `no usable Apache CouchDB release (${UNPACK_COMMAND} exited ${result.status}; see its message above)`,
    );
  }
  return folder === '' ? undefined : release(folder);
}

function isRelease(folder: string): boolean {
  return (
    fs.existsSync(path.join(folder, 'bin', 'couchdb')) &&
    fs.existsSync(path.join(folder, 'etc', 'default.ini'))
  );
}

function release(folder: string): CouchDbRelease {
  const root = path.resolve(folder);
  return { root, bin: path.join(root, 'bin', 'couchdb') };
}

/** One line saying which engine serves CouchDB here, for `make run` and the test summary. */
export function describeCouchEngine(env: NodeJS.ProcessEnv = process.env): string {
  const found = locateCouchDbRelease(env);
  if (found) return `CouchDB engine: Apache CouchDB (${found.root})`;
  if (env[COUCHDB_RELEASE_ENV] === 'none') {
    return `CouchDB engine: pouchdb-server stand-in, because ${COUCHDB_RELEASE_ENV}=none`;
  }
  return (
    `CouchDB engine: pouchdb-server stand-in, because no Apache CouchDB release is available ` +
    `(put it in ../shared/engines/ or set ${COUCHDB_RELEASE_ENV})`
  );
}
