/**
 * Where Apache CouchDB's boot time goes, and what VM flags change it: the release run as the kubelet
 * stand-in runs a pod (the operator's own ConfigMap and Secret files in local.d, the image's vm.args
 * and entrypoint), with `-init_debug` in ERL_FLAGS so the Erlang boot prints each step; each output
 * line is timestamped as it arrives. Phases of one boot on existing data (the wake case; the first
 * boot, which creates the system databases, is reported apart):
 *   vmStart         spawn -> the boot script's first step (erts up, preloaded modules)
 *   codeLoading     -> {progress,applications_loaded} (embedded mode loads every module here)
 *   otpApps         -> the first CouchDB application starts (kernel ... xmerl: crypto, ssl, os_mon)
 *   couchApps       -> the last application's start step (config ... couch_peruser)
 *   upAfterApps     -> GET /_up answers 200 (may be before the last apps: chttpd listens early)
 *   firstRequest    /_up 200 -> the answer to GET /bench/doc with the admin's Basic auth, in two
 *                   requests: firstAuth (GET /_session with it: the first Basic auth checks the
 *                   password against the [admins] PBKDF2 hash, then caches it) and firstDocument
 *                   (GET /bench/doc: the database's shard opened, the document read)
 *   cpuToUp         the engine's CPU time (user + system, all its threads) when /_up answered
 *   up / total      spawn -> /_up answered / spawn -> the first answer
 * and the three slowest applications by their start step. The boot is CPU-bound (on a quiet
 * machine its CPU time is about its wall time), so cpuToUp is the figure a loaded machine changes
 * least: compare variants by it first. Variants (ALL_VARIANTS) are ERL_FLAGS a pod's env could
 * set or a local.d file the operator's ConfigMap could add; they run alternately, BENCH_BOOTS
 * times each (default 5), BENCH_VARIANTS=name,name picks them (the first is the anchor). The machine
 * is shared: compare variants with the anchor measured in the same run.
 *
 *   npx tsx bench/couchdb-boot.ts
 *   BENCH_VARIANTS='image as is,-mode embedded' npx tsx bench/couchdb-boot.ts
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  adminHashSchemeFor,
  adminPasswordSalt,
  computeAdminPasswordHash,
} from '../operator/resources/couch-instance/admin-password-hash.js';
import { AUTH_INI_KEY, buildAuthIni } from '../operator/resources/couch-instance/admin-secret.js';
import { buildCouchDbIni, COUCHDB_INI_KEY } from '../operator/resources/couch-instance/couchdb-config.js';
import { NEWEST_SUPPORTED_COUCHDB_VERSION } from '../api/couchdb-versions.js';
import { locateCouchDbRelease, startApacheCouchDbEngine } from '../local/couch-engine/index.js';
import { getFreePort } from '../local/ports.js';
import { basicAuth } from '../test/helpers/gateway/http-request.js';
import { seedBenchDocument } from './lib/bench-cluster.js';
import { cpuSeconds } from './lib/process-usage.js';
import { median, round } from './lib/stats.js';

const BOOTS = Number(process.env.BENCH_BOOTS ?? 5);
/** What one variant changes, each something a production pod can set without touching the release. */
interface Variant {
  /** ERL_FLAGS the pod's env sets (after -init_debug). */
  erlFlags?: string;
  /** A local.d file the operator's ConfigMap would add, read after the operator's own. */
  ini?: string;
}
/**
 * The variants measured so far (docs/cold-start.md has each one's figures; none is adopted).
 * `-mode embedded` loads every module of every application before the first starts, where the
 * release's interactive mode (the emulator's default) loads a module when first called.
 */
const ALL_VARIANTS: Record<string, Variant> = {
  'image as is': {},
  '+S 1:1 +SDcpu 1:1 +A 1': { erlFlags: '+S 1:1 +SDcpu 1:1 +A 1' },
  '+P 262144': { erlFlags: '+P 262144' },
  'log warning': { ini: '[log]\nlevel = warning\n' },
  '-mode embedded': { erlFlags: '-mode embedded' },
  '+JMsingle true': { erlFlags: '+JMsingle true' },
};
/** BENCH_VARIANTS=name,name picks some; by default the anchor and the scheduler flags. */
const VARIANTS: Record<string, Variant> = Object.fromEntries(
  (process.env.BENCH_VARIANTS?.split(',') ?? Object.keys(ALL_VARIANTS).slice(0, 2)).map((name) => {
    const variant = ALL_VARIANTS[name];
    if (!variant) throw new Error(`unknown variant ${name}: ${Object.keys(ALL_VARIANTS).join(', ')}`);
    return [name, variant];
  }),
);
const admin = { username: 'admin', password: 'bench-password' };

interface Boot {
  vmStart: number;
  codeLoading: number;
  otpApps: number;
  couchApps: number;
  upAfterApps: number;
  firstRequest: number;
  firstAuth: number;
  firstDocument: number;
  cpuToUp: number;
  up: number;
  total: number;
  apps: Array<[string, number]>;
}

async function operatorEtc(): Promise<Map<string, string>> {
  const scheme = adminHashSchemeFor(NEWEST_SUPPORTED_COUCHDB_VERSION);
  const hash = await computeAdminPasswordHash({
    password: admin.password,
    salt: adminPasswordSalt('bench'),
    scheme,
  });
  const ini = buildCouchDbIni({
    serverUuid: 'bench0000000000000000000000000000',
    adminUsername: admin.username,
    adminPasswordHash: hash,
    hashScheme: scheme,
    vendorName: 'Settee bench',
  });
  const auth = buildAuthIni({ ...admin, cookieSecret: 'bench-cookie-secret' });
  // Where the operator's StatefulSet mounts them (operator/resources/couch-instance/statefulset.ts).
  return new Map([
    [`local.d/10-${COUCHDB_INI_KEY}`, ini],
    [`local.d/11-${AUTH_INI_KEY}`, auth],
  ]);
}

async function boot(options: { dataDir: string; etc: Map<string, string>; variant: Variant }): Promise<Boot> {
  const release = locateCouchDbRelease();
  if (!release) throw new Error('no Apache CouchDB release: run make deps');
  const marks: Array<[number, string]> = [];
  const started = performance.now();
  const port = await getFreePort();
  const engine = await startApacheCouchDbEngine({
    release,
    dataDir: options.dataDir,
    network: { kind: 'published', host: '127.0.0.1', port },
    container: {
      etc: options.variant.ini
        ? new Map([...options.etc, ['local.d/12-variant.ini', options.variant.ini]])
        : options.etc,
      env: { ERL_FLAGS: `-init_debug ${options.variant.erlFlags ?? ''}`.trim() },
    },
    onOutputLine: (line) => marks.push([performance.now() - started, line]),
  });
  // startApacheCouchDbEngine resolves when /_up answered (polled every 10 ms).
  const upAt = performance.now() - started;
  // bin/couchdb execs erlexec, which execs the emulator: the engine's pid is the VM's.
  const cpuToUp = cpuSeconds(engine.pid) * 1000;
  const get = async (requestPath: string): Promise<number> => {
    const response = await fetch(`${engine.url}${requestPath}`, {
      headers: { Authorization: basicAuth(admin.username, admin.password) },
    });
    await response.text();
    if (response.status !== 200) throw new Error(`GET ${requestPath} answered ${response.status}`);
    return performance.now() - started;
  };
  let authAt: number;
  let answeredAt: number;
  try {
    authAt = await get('/_session');
    answeredAt = await get('/bench/doc');
  } finally {
    await engine.stop();
  }
  const at = (pattern: RegExp): number => marks.find(([, line]) => pattern.test(line))?.[0] ?? Number.NaN;
  const starts = marks
    .map(([ms, line]) => [ms, /start_boot,\[(\w+),/.exec(line)?.[1]] as const)
    .filter((mark): mark is readonly [number, string] => mark[1] !== undefined);
  const apps = starts.map(([ms, app], i) => [app, (starts[i + 1]?.[0] ?? upAt) - ms] as [string, number]);
  const first = marks[0]?.[0] ?? Number.NaN;
  const loaded = at(/progress,applications_loaded/);
  const firstCouch = starts.find(([, app]) => app === 'config')?.[0] ?? Number.NaN;
  const lastStart = starts[starts.length - 1]?.[0] ?? Number.NaN;
  return {
    vmStart: first,
    codeLoading: loaded - first,
    otpApps: firstCouch - loaded,
    couchApps: lastStart - firstCouch,
    upAfterApps: upAt - lastStart,
    firstRequest: answeredAt - upAt,
    firstAuth: authAt - upAt,
    firstDocument: answeredAt - authAt,
    cpuToUp,
    up: upAt,
    total: answeredAt,
    apps,
  };
}

function summarize(boots: Boot[]): Record<string, unknown> {
  const keys = [
    'vmStart',
    'codeLoading',
    'otpApps',
    'couchApps',
    'upAfterApps',
    'firstRequest',
    'firstAuth',
    'firstDocument',
    'cpuToUp',
    'up',
    'total',
  ] as const;
  const phases = Object.fromEntries(keys.map((k) => [k, round(median(boots.map((b) => b[k])))]));
  const byApp = new Map<string, number[]>();
  for (const b of boots) for (const [app, ms] of b.apps) byApp.set(app, [...(byApp.get(app) ?? []), ms]);
  const slowest = [...byApp]
    .map(([app, ms]) => [app, round(median(ms))] as const)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5);
  return {
    medianMs: phases,
    ups: boots.map((b) => round(b.up)),
    totals: boots.map((b) => round(b.total)),
    cpuToUp: boots.map((b) => round(b.cpuToUp)),
    slowestAppStartsMs: Object.fromEntries(slowest),
  };
}

async function main(): Promise<void> {
  const etc = await operatorEtc();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-bench-boot-'));
  try {
    console.log('==> first boot on an empty volume (system databases created), then the bench document');
    const firstBoot = await bootAndSeed(dataDir, etc);
    console.log(JSON.stringify({ firstBootMs: firstBoot }, null, 2));
    const results = new Map<string, Boot[]>(Object.keys(VARIANTS).map((name) => [name, []]));
    for (let i = 0; i < BOOTS; i++) {
      for (const [name, variant] of Object.entries(VARIANTS)) {
        const result = await boot({ dataDir, etc, variant });
        results.get(name)?.push(result);
        console.log(`    ${name}: ${round(result.total)} ms`);
      }
    }
    const report = Object.fromEntries([...results].map(([name, boots]) => [name, summarize(boots)]));
    console.log(
      JSON.stringify(
        { bootsPerVariant: BOOTS, loadAverage: os.loadavg().map((l) => round(l, 1)), report },
        null,
        2,
      ),
    );
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

/** The first boot creates _users, _replicator and the node databases; then the document the boots read. */
async function bootAndSeed(dataDir: string, etc: Map<string, string>): Promise<number> {
  const release = locateCouchDbRelease();
  if (!release) throw new Error('no Apache CouchDB release: run make deps');
  const started = performance.now();
  const engine = await startApacheCouchDbEngine({
    release,
    dataDir,
    network: { kind: 'published', host: '127.0.0.1', port: await getFreePort() },
    container: { etc, env: {} },
  });
  const upMs = performance.now() - started;
  await seedBenchDocument(engine.url, basicAuth(admin.username, admin.password));
  await engine.stop();
  return round(upMs);
}

await main();
