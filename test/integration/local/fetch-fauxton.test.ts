import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FAUXTON_VERSION, fauxtonCache } from '../../../local/couch-engine/fauxton-release.js';

const SCRIPT = path.resolve('local/tools/fetch-fauxton.ts');

function runFetch(env: NodeJS.ProcessEnv): { status: number | null; stderr: string; stdout: string } {
  const result = spawnSync(process.execPath, ['--import', 'tsx', SCRIPT], {
    env: {
      PATH: process.env.PATH,
      HOME: os.homedir(),
      SETTEE_CACHE_DIR: process.env.SETTEE_CACHE_DIR,
      ...env,
    },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: result.status, stderr: result.stderr, stdout: result.stdout };
}

describe('the Fauxton fetch', () => {
  let emptyDir: string;
  beforeAll(() => {
    emptyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'settee-fetch-fauxton-'));
  });
  afterAll(() => fs.rmSync(emptyDir, { recursive: true, force: true }));

  // npm's offline mode with an empty npm cache: the fetch fails without any connection being tried.
  it('when nothing is cached and npm cannot reach the registry, then it exits non-zero, says why, and leaves no partial cache', () => {
    const cacheRoot = path.join(emptyDir, 'cache');
    const result = runFetch({
      SETTEE_CACHE_DIR: cacheRoot,
      npm_config_offline: 'true',
      npm_config_cache: path.join(emptyDir, 'npm'),
    });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(`[fauxton] error: \`npm pack fauxton@${FAUXTON_VERSION}`);
    expect(result.stderr).toContain('ENOTCACHED');
    expect(result.stdout).toBe('');
    expect(fs.readdirSync(cacheRoot)).toEqual([]);
  });

  it('when the release is cached, then it prints its folder without fetching', () => {
    // Offline, so a fetch attempt would fail: success means the cache was used.
    const result = runFetch({ npm_config_offline: 'true', npm_config_cache: path.join(emptyDir, 'npm') });
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe(fauxtonCache().releaseDir);
    expect(result.stderr).toBe('');
  });
});
