/**
 * Fetches the official Fauxton build (what Apache CouchDB 3.x serves at /_utils) once into
 * ~/.cache/settee/fauxton-<version>/release/, for the pouchdb stand-in to serve. Only the npm
 * tarball is fetched (`npm pack`, no install: the package depends on its whole build toolchain),
 * checked against the sha512 pinned in local/couch-engine/fauxton-release.ts, and only its
 * package/dist/release folder is extracted.
 *
 * Usage: npx tsx local/tools/fetch-fauxton.ts    prints the folder holding index.html
 * Env:   SETTEE_CACHE_DIR                         cache root (default ~/.cache/settee)
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  FAUXTON_TARBALL_INTEGRITY,
  FAUXTON_VERSION,
  fauxtonCache,
  isFauxtonFetched,
} from '../couch-engine/fauxton-release.js';

const PACKAGE = `fauxton@${FAUXTON_VERSION}`;
const RELEASE_IN_TARBALL = 'package/dist/release';

const log = (message: string): void => void process.stderr.write(`[fauxton] ${message}\n`);

class FetchFauxtonError extends Error {
  readonly code = 'FETCH_FAUXTON_FAILED';
}

/** Runs a command to completion; its output is shown only when it fails. */
function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) {
    const output = `${result.error?.message ?? ''}${result.stderr ?? ''}`.trim();
    throw new FetchFauxtonError(
      `\`${command} ${args.join(' ')}\` failed (exit ${result.status}):\n${output}`,
    );
  }
  return result.stdout;
}

function integrityOf(file: string): string {
  return `sha512-${crypto.createHash('sha512').update(fs.readFileSync(file)).digest('base64')}`;
}

async function fetchFauxton(): Promise<string> {
  const cache = fauxtonCache();
  if (isFauxtonFetched(cache)) return cache.releaseDir;

  log(`fetching ${PACKAGE} from the npm registry (first run only)`);
  fs.mkdirSync(path.dirname(cache.dir), { recursive: true });
  // Beside the cache, so the final rename stays on one file system.
  const work = fs.mkdtempSync(`${cache.dir}.fetch-`);
  try {
    const packed = JSON.parse(
      run('npm', ['pack', PACKAGE, '--pack-destination', work, '--ignore-scripts', '--json'], work),
    ) as { filename: string }[];
    const tarball = path.join(work, packed[0]?.filename ?? `fauxton-${FAUXTON_VERSION}.tgz`);
    const integrity = integrityOf(tarball);
    if (integrity !== FAUXTON_TARBALL_INTEGRITY) {
      throw new FetchFauxtonError(
        `${PACKAGE} tarball has integrity ${integrity}, expected the pinned ${FAUXTON_TARBALL_INTEGRITY}`,
      );
    }
    run('tar', ['-xzf', tarball, '-C', work, RELEASE_IN_TARBALL], work);
    fs.rmSync(cache.dir, { recursive: true, force: true });
    fs.mkdirSync(cache.dir);
    fs.renameSync(path.join(work, RELEASE_IN_TARBALL), cache.releaseDir);
    fs.writeFileSync(cache.stampFile, `${FAUXTON_TARBALL_INTEGRITY}\n`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  log(`verified and extracted into ${cache.releaseDir}`);
  return cache.releaseDir;
}

fetchFauxton().then(
  (releaseDir) => console.log(releaseDir),
  (err: unknown) => {
    log(`error: ${err instanceof Error ? err.message : String(err)}`);
    log(`the pouchdb stand-in cannot serve /_utils without it; check that the npm registry is reachable`);
    process.exitCode = 1;
  },
);
