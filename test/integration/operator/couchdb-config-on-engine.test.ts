import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { NEWEST_SUPPORTED_COUCHDB_VERSION } from '../../../api/couchdb-versions.js';
import {
  locateCouchDbRelease,
  startApacheCouchDbEngine,
  type CouchEngine,
} from '../../../local/couch-engine/index.js';
import { getFreePort } from '../../../local/ports.js';
import {
  adminHashSchemeFor,
  adminPasswordSalt,
  computeAdminPasswordHash,
} from '../../../operator/resources/couch-instance/admin-password-hash.js';
import { AUTH_INI_KEY, buildAuthIni } from '../../../operator/resources/couch-instance/admin-secret.js';
import {
  buildCouchDbIni,
  COUCHDB_INI_KEY,
} from '../../../operator/resources/couch-instance/couchdb-config.js';
import { basicAuth } from '../../helpers/gateway/http-request.js';
import { waitFor } from '../../../local/wait.js';

const admin = { username: 'admin-0a1b2c', password: 'a long generated password' };
const cookieSecret = 'a-cookie-secret-of-the-instance';
const serverUuid = '6f1c0a539d7e4a518f0c2b7e5d1c9a10';

/**
 * The operator's rendered configuration, read by a real Apache CouchDB 3.5 exactly as the official
 * image reads it: the ConfigMap's and the Secret's files mounted where the StatefulSet mounts them.
 * Needs the release (make deps unpacks ../shared/engines/ into the cache).
 */
describe("the operator's CouchDB configuration on Apache CouchDB", () => {
  let dataDir: string;
  let hash: string;
  let etc: Map<string, string>;
  const output: string[] = [];
  let engine: CouchEngine;

  const start = async (): Promise<CouchEngine> => {
    const release = locateCouchDbRelease();
    if (!release) throw new Error('no Apache CouchDB release here: run make deps (../shared/engines/)');
    return startApacheCouchDbEngine({
      release,
      dataDir,
      network: { kind: 'published', host: '127.0.0.1', port: await getFreePort() },
      container: { etc, env: {} },
      onOutputLine: (line) => output.push(line),
    });
  };

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-operator-ini-'));
    const scheme = adminHashSchemeFor(NEWEST_SUPPORTED_COUCHDB_VERSION);
    hash = await computeAdminPasswordHash({
      password: admin.password,
      salt: adminPasswordSalt('uid'),
      scheme,
    });
    const ini = buildCouchDbIni({
      serverUuid,
      adminUsername: admin.username,
      adminPasswordHash: hash,
      hashScheme: scheme,
      vendorName: 'Settee',
    });
    etc = new Map([
      [`local.d/10-${COUCHDB_INI_KEY}`, ini],
      [`local.d/11-${AUTH_INI_KEY}`, buildAuthIni({ ...admin, cookieSecret })],
    ]);
    engine = await start();
  });

  afterAll(async () => {
    await engine?.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('when it starts on an empty volume, then it makes the system databases for its one node, with no N=3 request cut down', async () => {
    // CouchDB answers /_up before it has made the system databases: they come a moment later.
    const dbs = await waitFor(
      'the system databases',
      async () => {
        const listed = (await (
          await fetch(`${engine.url}/_all_dbs`, {
            headers: { Authorization: basicAuth(admin.username, admin.password) },
          })
        ).json()) as string[];
        return listed.length >= 2 ? listed : undefined;
      },
      { timeoutMs: 15_000 },
    );
    expect(dbs).toEqual(['_replicator', '_users']);
    expect(output.filter((line) => /Request to create N=\d+ DB but only 1 node/.test(line))).toEqual([]);
  });

  it('when the admin authenticates at once, then the hash is accepted as the operator wrote it, and not re-hashed', async () => {
    const authorization = basicAuth(admin.username, admin.password);
    const session = await fetch(`${engine.url}/_session`, { headers: { Authorization: authorization } });
    expect(await session.json()).toMatchObject({ userCtx: { name: admin.username, roles: ['_admin'] } });
    const held = await fetch(`${engine.url}/_node/_local/_config/admins/${admin.username}`, {
      headers: { Authorization: authorization },
    });
    expect(await held.json()).toBe(hash);
  });

  it('when a session cookie is issued and the engine restarts (a wake), then the cookie still authenticates', async () => {
    const login = await fetch(`${engine.url}/_session`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: admin.username, password: admin.password }),
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    expect(cookie).toMatch(/^AuthSession=/);
    await engine.stop();
    engine = await start();
    const session = await fetch(`${engine.url}/_session`, { headers: { Cookie: cookie } });
    expect(await session.json()).toMatchObject({ userCtx: { name: admin.username } });
    const welcome = (await (await fetch(`${engine.url}/`)).json()) as {
      uuid: string;
      vendor: { name: string };
    };
    expect(welcome).toMatchObject({ uuid: serverUuid, vendor: { name: 'Settee' } });
  });
});
