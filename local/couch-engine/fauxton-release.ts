import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FauxtonReleaseMissingError } from './errors.js';

/**
 * The official Fauxton build (the web UI Apache CouchDB 3.x ships at /_utils) that the pouchdb
 * stand-in serves: the `fauxton` npm package's dist/release folder, fetched once into a cache by
 * local/tools/fetch-fauxton.ts rather than installed, since the package depends on its whole build
 * toolchain. Fauxton 1.1.16 and later address CouchDB relative to their page, which is what lets
 * them work under the gateway's path form (/db/<namespace>/<name>/_utils/).
 */
export const FAUXTON_VERSION = '1.2.6';

/** npm's dist.integrity of fauxton@1.2.6: the tarball is checked against it before extraction. */
export const FAUXTON_TARBALL_INTEGRITY =
  'sha512-5ZwPKqstwmQclSHifWBmbyzlBOLoBB3gssGaiEFLPcIzHO0Zxz+uPr/D/Fs6DGH7Hfohw7s6zqcjwU9CRcshfw==';

/** What fetches it (`make deps` runs it too). */
export const FAUXTON_FETCH_COMMAND = 'npx tsx local/tools/fetch-fauxton.ts';

/** Where the release lives: the cache root shared with build-kube-tools.sh (SETTEE_CACHE_DIR). */
export interface FauxtonCache {
  /** `<cache>/fauxton-<version>`. */
  dir: string;
  /** The served folder: index.html and dashboard.assets/. */
  releaseDir: string;
  /** Written last, holding the verified integrity, so a half-done fetch never counts. */
  stampFile: string;
}

export function fauxtonCache(env: NodeJS.ProcessEnv = process.env): FauxtonCache {
  const root = env.SETTEE_CACHE_DIR || path.join(os.homedir(), '.cache', 'settee');
  const dir = path.join(root, `fauxton-${FAUXTON_VERSION}`);
  return { dir, releaseDir: path.join(dir, 'release'), stampFile: path.join(dir, 'fetched-integrity') };
}

/**
 * Whether the cache holds the release fetched and verified against the pinned integrity.
 * Synchronous: an engine's start, on the wake path, checks it, and two small local reads finish
 * sooner than their thread-pool round trips are handed back on a loaded machine (docs/cold-start.md).
 */
export function isFauxtonFetched(cache: FauxtonCache): boolean {
  let stamp = '';
  try {
    stamp = fs.readFileSync(cache.stampFile, 'utf8');
  } catch {
    return false;
  }
  if (stamp.trim() !== FAUXTON_TARBALL_INTEGRITY) return false;
  return fs.statSync(path.join(cache.releaseDir, 'index.html'), { throwIfNoEntry: false })?.isFile() ?? false;
}

/** The release folder to serve; fails, naming the command that fetches it, when it is not cached. */
export function requireFauxtonRelease(env: NodeJS.ProcessEnv = process.env): string {
  const cache = fauxtonCache(env);
  if (!isFauxtonFetched(cache)) throw new FauxtonReleaseMissingError(cache.dir, FAUXTON_FETCH_COMMAND);
  return cache.releaseDir;
}
