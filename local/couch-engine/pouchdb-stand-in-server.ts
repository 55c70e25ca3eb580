/**
 * A STAND-IN for Apache CouchDB 3.x, used only because a real CouchDB may not be installed where
 * `make run` and the tests run. It is pouchdb-server's express-pouchdb (PouchDB over LevelDB)
 * behind a small HTTP front that adds what CouchDB 3.x clients and Settee probe for and
 * express-pouchdb lacks: a CouchDB-shaped GET / (whose vendor says plainly that this is the
 * stand-in) and GET /_up. Set SETTEE_COUCHDB_BIN to run the real thing instead.
 *
 * Run as its own process by pouchdb-engine.ts, as plain `node` on the script stand-in-build.ts
 * builds from this file, configured through the environment (see stand-in-config.ts).
 *
 * Authentication, as CouchDB 3.x does it (no admin party):
 * - The admin goes into express-pouchdb's config `admins` section (kept in memory only, hashed
 *   with PBKDF2 by pouchdb-auth), so Basic auth and POST /_session cookies authenticate it, wrong
 *   credentials get 401, and anonymous requests are not admins: /_config, /_log, /_active_tasks
 *   and /_db_updates answer 401 without admin credentials, and so does creating or deleting a
 *   database (checked in the front, see isAdminOnlyInFront).
 * - New databases are admin-only, like CouchDB 3.x's `default_security = admin_only`: until a
 *   _security object is stored, a database's security is {members: {roles: [_admin]}, admins:
 *   {roles: [_admin]}}, so anonymous reads and writes get 401 (done by replacing pouchdb-security's
 *   getSecurity, which every express-pouchdb check goes through).
 * - GET /_all_dbs is admin-only, like CouchDB 3.x's `admin_only_all_dbs = true`: the front asks
 *   express-pouchdb's /_session who the caller is (see isAdminOnlyInFront).
 *
 * Known gaps (express-pouchdb 4.2 cannot do these, so they are not enforced):
 * - The system databases (_users, _replicator) get the same admin-only default; CouchDB's
 *   special rules for _users (a user reading its own document) are pouchdb-auth's, not CouchDB's.
 * - CouchDB 3.x-only endpoints are missing: /_node/{node}/_config (express-pouchdb has the 1.x
 *   /_config instead), /_dbs_info, /_scheduler/*, /_membership, /_cluster_setup, partitions.
 */
import http from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import {
  parseStandInConfig,
  STAND_IN_CONFIG_ENV,
  STAND_IN_REPORTED_COUCHDB_VERSION,
  STAND_IN_VENDOR_NAME,
  type StandInConfig,
} from './stand-in-config.js';

const FEATURES = ['access-ready', 'partitioned', 'pluggable-storage-engines', 'reshard', 'scheduler'];
const ADMIN_ROLE = '_admin';
const SHUTDOWN_GRACE_MS = 2_000;

// The untyped CommonJS packages, described as far as this file uses them.
type PouchDBConstructor = {
  plugin(plugin: unknown): PouchDBConstructor;
  defaults(options: object): PouchDBConstructor;
};
interface PouchDatabase {
  type(): string;
  get(id: string): Promise<{ security?: object }>;
}
type Callback<T> = (err: Error | null, value?: T) => void;
interface PouchSecurityPlugin {
  /** Called with a callback, or (through pouchdb-wrappers) with an options object it ignores. */
  getSecurity(this: PouchDatabase, callback?: unknown): Promise<object>;
}
interface CouchConfig {
  set(section: string, key: string, value: unknown, callback: (err: Error | null) => void): void;
}
interface ExpressPouchDB {
  (req: http.IncomingMessage, res: http.ServerResponse): void;
  couchConfig: CouchConfig;
  setPouchDB(pouchDB: PouchDBConstructor): Promise<void>;
}
type ExpressPouchDBFactory = (options: object) => ExpressPouchDB;

async function main(): Promise<void> {
  const config = parseStandInConfig(process.env[STAND_IN_CONFIG_ENV]);
  // Resolve through pouchdb-server, whose dependency tree this stand-in borrows.
  const fromPouchDBServer = createRequire(
    createRequire(import.meta.url).resolve('pouchdb-server/package.json'),
  );
  const fromExpressPouchDB = createRequire(fromPouchDBServer.resolve('express-pouchdb'));

  makeNewDatabasesAdminOnly(fromExpressPouchDB('pouchdb-security') as PouchSecurityPlugin);
  const PouchDB = (fromPouchDBServer('pouchdb-core') as PouchDBConstructor)
    .plugin(fromPouchDBServer('pouchdb-adapter-leveldb'))
    .plugin(fromPouchDBServer('pouchdb-adapter-http'))
    .plugin(fromPouchDBServer('pouchdb-replication'))
    .plugin(fromPouchDBServer('pouchdb-mapreduce'))
    .defaults({ prefix: path.resolve(config.dataDir) + path.sep });

  const couchApp = (fromPouchDBServer('express-pouchdb') as ExpressPouchDBFactory)({
    mode: 'fullCouchDB',
    // Nothing of the config (the admin password included) is written to disk.
    inMemoryConfig: true,
    // Its CouchDB-style log file is of no use here (startup failures and crashes reach stderr).
    logPath: os.devNull,
  });
  const setConfig = (section: string, key: string, value: unknown): Promise<void> =>
    new Promise((resolve, reject) =>
      couchApp.couchConfig.set(section, key, value, (err) => (err ? reject(err) : resolve())),
    );
  await setConfig('couchdb', 'uuid', config.uuid);
  await setConfig('couch_httpd_auth', 'secret', config.secret);
  // pouchdb-auth hashes it (PBKDF2) as it is stored; from now on there is no admin party.
  await setConfig('admins', config.admin.username, config.admin.password);
  await couchApp.setPouchDB(PouchDB);

  const server = http.createServer((req, res) => handle(config, couchApp, req, res));
  server.once('error', (err: NodeJS.ErrnoException) => {
    console.error(
      `pouchdb stand-in: cannot listen on 127.0.0.1:${config.port}: ${err.code ?? ''} ${err.message}`,
    );
    process.exit(1);
  });
  server.listen(config.port, '127.0.0.1', () => {
    console.log(`pouchdb stand-in for CouchDB listening on http://127.0.0.1:${config.port}`);
  });
  exitWith(server);
}

function handle(
  config: StandInConfig,
  couchApp: ExpressPouchDB,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): void {
  const pathname = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
  const reading = req.method === 'GET' || req.method === 'HEAD';
  if (reading && pathname === '/') {
    sendJson(req, res, 200, {
      couchdb: 'Welcome',
      version: STAND_IN_REPORTED_COUCHDB_VERSION,
      uuid: config.uuid,
      features: FEATURES,
      vendor: { name: STAND_IN_VENDOR_NAME },
    });
  } else if (reading && pathname === '/_up') {
    sendJson(req, res, 200, { status: 'ok', seeds: {} });
  } else if (isAdminOnlyInFront(req.method, pathname)) {
    isServerAdmin(config.port, req).then(
      (admin) =>
        admin
          ? couchApp(req, res)
          : sendJson(req, res, 401, { error: 'unauthorized', reason: 'You are not a server admin.' }),
      (err: unknown) =>
        sendJson(req, res, 500, { error: 'internal_server_error', reason: `session lookup failed: ${err}` }),
    );
  } else {
    if (isStreamingFeed(pathname, req.url)) delete req.headers['accept-encoding'];
    couchApp(req, res);
  }
}

/**
 * express-pouchdb gzips whatever the client accepts, and its compression buffers a continuous or
 * longpoll _changes feed until the feed ends; CouchDB sends those lines as they happen.
 */
function isStreamingFeed(pathname: string, url: string | undefined): boolean {
  if (!pathname.endsWith('/_changes')) return false;
  const feed = new URL(url ?? '/', 'http://127.0.0.1').searchParams.get('feed');
  return feed === 'continuous' || feed === 'longpoll' || feed === 'eventsource';
}

/**
 * Checked here rather than by express-pouchdb: GET /_all_dbs, which it serves to anyone, and
 * creating or deleting a database, where a non-admin makes its PUT /{db} handler throw outside
 * any promise and take the whole process down.
 */
function isAdminOnlyInFront(method: string | undefined, pathname: string): boolean {
  if (pathname === '/_all_dbs') return true;
  const databasePath = /^\/[^/]+$/.test(pathname) && pathname !== '/_session';
  return databasePath && (method === 'PUT' || method === 'DELETE');
}

/** Asks express-pouchdb's own /_session who the request's credentials (Basic or cookie) are. */
async function isServerAdmin(port: number, req: http.IncomingMessage): Promise<boolean> {
  const { authorization, cookie } = req.headers;
  if (authorization === undefined && cookie === undefined) return false;
  const headers: Record<string, string> = {};
  if (authorization !== undefined) headers.authorization = authorization;
  if (cookie !== undefined) headers.cookie = cookie;
  const response = await fetch(`http://127.0.0.1:${port}/_session`, { headers });
  if (!response.ok) {
    await response.body?.cancel();
    return false;
  }
  const session = (await response.json()) as { userCtx?: { roles?: string[] } };
  return session.userCtx?.roles?.includes(ADMIN_ROLE) ?? false;
}

/**
 * CouchDB 3.x gives a new database the security object below; express-pouchdb leaves it empty,
 * which means public. Reading "no stored _security" as admin-only (failing closed on any read
 * error) gives the same result for every check, because pouchdb-security and express-pouchdb both
 * look the object up through this one function.
 */
function makeNewDatabasesAdminOnly(security: PouchSecurityPlugin): void {
  const original = security.getSecurity;
  security.getSecurity = function getSecurity(this: PouchDatabase, callback?: unknown) {
    const promise =
      this.type() === 'http' || this.type() === 'https'
        ? original.call(this)
        : this.get('_local/_security').then(
            (doc) => doc.security ?? {},
            () => ({
              members: { names: [], roles: [ADMIN_ROLE] },
              admins: { names: [], roles: [ADMIN_ROLE] },
            }),
          );
    if (typeof callback === 'function') {
      const done = callback as Callback<object>;
      promise.then((value) => done(null, value), done);
    }
    return promise;
  };
}

function sendJson(req: http.IncomingMessage, res: http.ServerResponse, status: number, body: object): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'must-revalidate',
  });
  res.end(req.method === 'HEAD' ? undefined : text);
}

/** Ends on SIGTERM/SIGINT, and on its own when the process that started it is gone. */
function exitWith(server: http.Server): void {
  const shutdown = (): void => {
    setTimeout(() => process.exit(0), SHUTDOWN_GRACE_MS).unref();
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
  const parent = process.ppid;
  setInterval(() => process.ppid !== parent && shutdown(), 1_000).unref();
}

main().catch((err: unknown) => {
  console.error('pouchdb stand-in failed to start:', err);
  process.exit(1);
});
