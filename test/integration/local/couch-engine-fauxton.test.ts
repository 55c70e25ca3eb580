import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  availableCouchEngineKinds,
  FauxtonReleaseMissingError,
  startCouchEngine,
  type CouchEngine,
  type CouchEngineKind,
} from '../../../local/couch-engine/index.js';
import { FAUXTON_FETCH_COMMAND, fauxtonCache } from '../../../local/couch-engine/fauxton-release.js';

const admin = { username: 'admin', password: 'fauxton-test-password' };
const tempDirs: string[] = [];

async function newTempDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-fauxton-test-'));
  tempDirs.push(dir);
  return dir;
}

afterAll(async () => {
  await Promise.all(tempDirs.map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

// Always the pouchdb-server stand-in; Apache CouchDB too when a release is available (make deps).
describe.each(availableCouchEngineKinds())('Fauxton at /_utils on the %s engine', (kind: CouchEngineKind) => {
  let engine: CouchEngine;

  beforeAll(async () => {
    engine = await startCouchEngine({ kind, dataDir: await newTempDir(), admin });
  });

  afterAll(async () => {
    await engine?.stop();
  });

  it('when GET /_utils is requested, then it redirects permanently to /_utils/', async () => {
    const response = await fetch(`${engine.url}/_utils`, { redirect: 'manual' });
    expect(response.status).toBe(301);
    expect(new URL(response.headers.get('location') ?? '', engine.url).pathname).toBe('/_utils/');
  });

  it('when /_utils/ and the scripts and styles its page names are requested without credentials, then each is served', async () => {
    const page = await fetch(`${engine.url}/_utils/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="(dashboard\.assets\/[^"]+\.(?:js|css))"/g)].map(
      (m) => m[1],
    );
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const asset of assets) {
      const response = await fetch(`${engine.url}/_utils/${asset}`);
      await response.body?.cancel();
      expect([asset, response.status]).toEqual([asset, 200]);
    }
  });

  it('when a file the release lacks, or /_utils/ with another method than GET by the admin, is requested, then 404 and 405', async () => {
    const missing = await fetch(`${engine.url}/_utils/no-such-file.js`);
    await missing.body?.cancel();
    expect(missing.status).toBe(404);
    // Apache CouchDB checks the credentials of a POST first (401 without), then the method.
    const authorization = `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString('base64')}`;
    const post = await fetch(`${engine.url}/_utils/`, { method: 'POST', headers: { authorization } });
    await post.body?.cancel();
    expect(post.status).toBe(405);
  });
});

describe('the pouchdb-server stand-in and its Fauxton release', () => {
  it('when running, then /_utils/ is the cached official Fauxton release', async () => {
    const engine = await startCouchEngine({ kind: 'pouchdb-server', dataDir: await newTempDir(), admin });
    try {
      const served = await (await fetch(`${engine.url}/_utils/`)).text();
      expect(served).toBe(await fs.readFile(path.join(fauxtonCache().releaseDir, 'index.html'), 'utf8'));
      expect(served).toContain('Fauxton Release');
    } finally {
      await engine.stop();
    }
  });

  it('when the release has not been fetched into the cache, then the engine does not start and names the command that fetches it', async () => {
    const env = { SETTEE_CACHE_DIR: await newTempDir() };
    const attempt = startCouchEngine({ kind: 'pouchdb-server', env, dataDir: await newTempDir(), admin });
    await expect(attempt).rejects.toBeInstanceOf(FauxtonReleaseMissingError);
    await expect(attempt).rejects.toThrow(FAUXTON_FETCH_COMMAND);
    await expect(attempt).rejects.toThrow(fauxtonCache(env).dir);
  });

  it('when the cache holds a release without a verified fetch stamp, then it counts as missing', async () => {
    const env = { SETTEE_CACHE_DIR: await newTempDir() };
    const cache = fauxtonCache(env);
    await fs.mkdir(cache.releaseDir, { recursive: true });
    await fs.writeFile(path.join(cache.releaseDir, 'index.html'), '<html></html>');
    await fs.writeFile(cache.stampFile, 'sha512-not-the-pinned-one\n');
    const attempt = startCouchEngine({ kind: 'pouchdb-server', env, dataDir: await newTempDir(), admin });
    await expect(attempt).rejects.toBeInstanceOf(FauxtonReleaseMissingError);
  });
});
