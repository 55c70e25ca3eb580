/**
 * A STAND-IN for Apache CouchDB 3.x, used only because a real CouchDB may not be installed where
 * `make run` and the tests run. It is pouchdb-server's express-pouchdb (PouchDB over LevelDB)
 * behind a small HTTP front that adds what CouchDB 3.x clients and Settee probe for and
 * express-pouchdb lacks: a CouchDB-shaped GET / (whose vendor says plainly that this is the
 * stand-in), GET /_up, GET /_scheduler/jobs (see below), and the Fauxton CouchDB 3.x ships at
 * /_utils (see below). Where an Apache CouchDB release is available (couchdb-release.ts), the real thing runs instead.
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
 * - GET /_all_dbs and GET /_scheduler/{jobs,docs} are admin-only, like CouchDB 3.x's
 *   (`admin_only_all_dbs = true`): the front asks express-pouchdb's /_session who the caller is
 *   (see isServerAdmin).
 *
 * Replications: documents in /_replicator are run by express-pouchdb's replicator
 * (pouchdb-replicator), which keeps its running replications in memory it does not expose and
 * records each one's state in its document: `_replication_state: triggered` from the moment it
 * starts a replication until it sees it complete or fail (or the document is deleted). GET
 * /_scheduler/jobs lists those triggered documents in CouchDB 3.x's response shape, so a client
 * asking "is a replication running?" gets the replicator's own answer, and GET /_scheduler/docs
 * lists every document with its state (stand-in-scheduler.ts). GET
 * /_active_tasks stays express-pouchdb's stub, which always answers []. Deleting the document of
 * a running replication stops it (see survivePouchReplicatorDeletedDocumentRead).
 *
 * Fauxton: /_utils serves the official Fauxton release (the `fauxton` npm package's build, fetched
 * into a cache by local/tools/fetch-fauxton.ts; see stand-in-fauxton.ts), not express-pouchdb's
 * pouchdb-fauxton 0.0.6, which only works at the root of a host. It addresses CouchDB relative to
 * its page, so it works under the gateway's path form too. Logging in, listing databases (GET
 * /_all_dbs then GET /{db} each), creating a database and creating a document need nothing the
 * stand-in lacks, and neither do the Config and CORS pages (the front maps /_node/{node}/_config
 * onto express-pouchdb's CouchDB 1.x /_config, see NODE_PREFIX), nor Replication's activity list
 * (/_scheduler/docs). Active Tasks is always empty and Setup sees express-pouchdb's single-node
 * answers.
 *
 * Known gaps (express-pouchdb 4.2 cannot do these, so they are not enforced or not served):
 * - The system databases (_users, _replicator) get the same admin-only default; CouchDB's
 *   special rules for _users (a user reading its own document) are pouchdb-auth's, not CouchDB's.
 * - A replication retrying after errors (the replicator retries forever) is still `triggered`, so
 *   /_scheduler/jobs lists it as running, where CouchDB would show a crashing job with pid null;
 *   its jobs carry no `info` statistics, and /_replicate jobs (not in /_replicator) are not listed.
 * - CouchDB 3.x-only endpoints are missing: /_dbs_info, /_scheduler/docs/{db}[/{docid}], partitions;
 *   /_membership and /_cluster_setup are express-pouchdb's fixed answers (node `node1@127.0.0.1`,
 *   `cluster_disabled`), and the configuration is its CouchDB 1.x /_config, kept in memory.
 * - GET / reports CouchDB 3.3's features, `partitioned` among them, but PUT /{db}?partitioned=true
 *   creates a plain database (Fauxton's "Partitioned" choice included).
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
import { createFauxtonHandler, isFauxtonPath } from './stand-in-fauxton.js';
import { credentialHeaders, schedulerDocs, schedulerJobs } from './stand-in-scheduler.js';
import { sendJson } from './stand-in-send-json.js';

const FEATURES = ['access-ready', 'partitioned', 'pluggable-storage-engines', 'reshard', 'scheduler'];
const ADMIN_ROLE = '_admin';
/** The one node's name, as express-pouchdb's /_membership reports it. */
const NODE_NAME = 'node1@127.0.0.1';
/**
 * CouchDB 3.x serves each node's configuration, stats and system endpoints under /_node/{node}/,
 * where {node} is a name from /_membership or `_local`; express-pouchdb serves them at the root
 * (CouchDB 1.x's /_config). It strips its own node's prefix itself, but only after its admin
 * checks, which go by the root path: /_node/node1@127.0.0.1/_config answered anyone, secrets and
 * admin hashes included. So the front strips the prefix first.
 */
const NODE_PREFIX = /^\/_node\/(?:_local|node1(?:@|%40)127\.0\.0\.1)(?=\/)/;
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
  survivePouchReplicatorDeletedDocumentRead();
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
    // Its /_utils is pouchdb-fauxton 0.0.6 (2017), which works only at the root of a host; the
    // front serves the Fauxton release CouchDB 3.x ships instead (see stand-in-fauxton.ts).
    overrideMode: { exclude: ['routes/fauxton'] },
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

  const serveFauxton = createFauxtonHandler(config.fauxtonDir);
  const server = http.createServer((req, res) => handle(config, { couchApp, serveFauxton }, req, res));
  server.once('error', (err: NodeJS.ErrnoException) => {
    console.error(
      `pouchdb stand-in: cannot listen on ${config.host}:${config.port}: ${err.code ?? ''} ${err.message}`,
    );
    process.exit(1);
  });
  server.listen(config.port, config.host, () => {
    console.log(`pouchdb stand-in for CouchDB listening on http://${config.host}:${config.port}`);
  });
  exitWith(server);
}

type RequestListener = (req: http.IncomingMessage, res: http.ServerResponse) => void;

function handle(
  config: StandInConfig,
  { couchApp, serveFauxton }: { couchApp: ExpressPouchDB; serveFauxton: RequestListener },
  req: http.IncomingMessage,
  res: http.ServerResponse,
): void {
  if (req.url !== undefined) req.url = req.url.replace(NODE_PREFIX, '');
  const pathname = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
  const route = routePath(pathname);
  const reading = req.method === 'GET' || req.method === 'HEAD';
  if (reading && pathname === '/') {
    sendJson(req, res, 200, {
      couchdb: 'Welcome',
      version: STAND_IN_REPORTED_COUCHDB_VERSION,
      uuid: config.uuid,
      features: FEATURES,
      vendor: { name: STAND_IN_VENDOR_NAME },
    });
  } else if (isFauxtonPath(pathname)) {
    serveFauxton(req, res);
  } else if (reading && route === '/_up') {
    sendJson(req, res, 200, { status: 'ok', seeds: {} });
  } else if (reading && (route === '/_scheduler/jobs' || route === '/_scheduler/docs')) {
    const list = route === '/_scheduler/jobs' ? schedulerJobs : schedulerDocs;
    whenServerAdmin(ownOrigin(config), req, res, async () =>
      sendJson(req, res, 200, await list({ origin: ownOrigin(config), node: NODE_NAME }, req)),
    );
  } else if (isAdminOnlyInFront(req.method, route)) {
    whenServerAdmin(ownOrigin(config), req, res, () => couchApp(req, res));
  } else {
    if (isStreamingFeed(route, req.url)) delete req.headers['accept-encoding'];
    couchApp(req, res);
  }
}

/**
 * The path as express-pouchdb's routes match it: Express routing ignores trailing slashes and case,
 * so the front's checks must too, or /_all_dbs/ and PUT /{db}/ would pass them by.
 */
function routePath(pathname: string): string {
  const trimmed = pathname.replace(/\/+$/, '');
  return trimmed === '' ? '/' : trimmed.toLowerCase();
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

/** Where this server listens, for the requests it makes to itself. */
function ownOrigin(config: StandInConfig): string {
  return `http://${config.host}:${config.port}`;
}

/** Serves the request with `serve` when its credentials are a server admin's, else answers 401. */
function whenServerAdmin(
  origin: string,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  serve: () => void | Promise<void>,
): void {
  isServerAdmin(origin, req)
    .then((admin) =>
      admin
        ? serve()
        : sendJson(req, res, 401, { error: 'unauthorized', reason: 'You are not a server admin.' }),
    )
    .catch((err: unknown) => {
      if (res.headersSent) res.destroy();
      else sendJson(req, res, 500, { error: 'internal_server_error', reason: String(err) });
    });
}

/** Asks express-pouchdb's own /_session who the request's credentials are. */
async function isServerAdmin(origin: string, req: http.IncomingMessage): Promise<boolean> {
  const headers = credentialHeaders(req);
  if (Object.keys(headers).length === 0) return false;
  const response = await fetch(`${origin}/_session`, { headers });
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

/**
 * pouchdb-replicator 4.2 takes the process down when a replication document is deleted while its
 * replication runs: the deletion cancels the replication, whose completion handler reads the
 * now-deleted document back and never catches the not_found. CouchDB just stops the job, and so
 * does the stand-in by letting exactly that rejection pass; every other one still ends the process.
 */
function survivePouchReplicatorDeletedDocumentRead(): void {
  process.on('unhandledRejection', (reason: unknown) => {
    const error = reason as { status?: unknown; name?: unknown; reason?: unknown } | null;
    if (error?.status === 404 && error.name === 'not_found' && error.reason === 'deleted') return;
    throw reason;
  });
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
