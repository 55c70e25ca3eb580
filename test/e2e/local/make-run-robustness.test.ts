import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { PREFERRED_CONSOLE_PORT } from '../../../local/console-port.js';
import { canListenOn, getFreePort, isPortOpen } from '../../../local/ports.js';
import { isProcessAlive } from '../../../local/process.js';
import { waitFor } from '../../../local/wait.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const START_TIMEOUT_MS = 150_000;

interface MakeRun {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/** `make run` as a user starts it (local/main.ts), on its own state folder and gateway port. */
function makeRun(stateDir: string, gatewayPort: number): MakeRun {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'local/main.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      SETTEE_LOCAL_STATE_DIR: stateDir,
      SETTEE_GATEWAY_PORT: String(gatewayPort),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A process group of its own, as a terminal's foreground job is: a test can send it a Ctrl-C.
    detached: true,
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function untilRunning(run: MakeRun): Promise<void> {
  await waitFor(
    'make run to say it is running',
    async () => (run.output().includes('Settee is running') ? true : undefined),
    { timeoutMs: START_TIMEOUT_MS, intervalMs: 250, abort: run.exited },
  ).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}\n--- make run output ---\n${run.output()}`);
  });
}

/** Every process of this platform: they all carry its state folder in their environment. */
function platformPids(stateDir: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/environ`).includes(`SETTEE_LOCAL_STATE_DIR=${stateDir}\0`);
      } catch {
        return false;
      }
    });
}

function kubeConfigOf(stateDir: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(path.join(stateDir, 'kubeconfig'));
  return kubeConfig;
}

async function notesInstance(stateDir: string): Promise<{ uid: string; phase?: string }> {
  const object = (await kubeConfigOf(stateDir).makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
    group: 'settee.dev',
    version: 'v1alpha1',
    namespace: 'default',
    plural: 'couchinstances',
    name: 'notes',
  })) as { metadata: { uid: string }; status?: { phase?: string } };
  return { uid: object.metadata.uid, phase: object.status?.phase };
}

/** The example instance's URL with credentials, from its Secret. */
async function notesUrl(stateDir: string): Promise<URL> {
  const secret = await kubeConfigOf(stateDir)
    .makeApiClient(CoreV1Api)
    .readNamespacedSecret({ name: 'notes-admin', namespace: 'default' });
  return new URL(Buffer.from(secret.data?.url ?? '', 'base64').toString('utf8'));
}

function couch(url: URL, pathname: string, init: RequestInit = {}): Promise<Response> {
  const auth = Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`);
  return fetch(`${url.origin}${url.pathname}${pathname}`, {
    ...init,
    headers: { authorization: `Basic ${auth.toString('base64')}`, 'content-type': 'application/json' },
  });
}

describe('make run holds up when run twice, when a child crashes, and when it is killed', () => {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'settee-make-run-'));
  const otherStateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'settee-make-run-other-'));
  let gatewayPort: number;
  let first: MakeRun;
  const runs: MakeRun[] = [];
  // Holds the console's default port and answers /healthz there, as a gateway on 8090 did.
  let impostor: http.Server | undefined;

  beforeAll(async () => {
    // When another process holds 8090 already, that is the same situation for make run.
    if (await canListenOn(PREFERRED_CONSOLE_PORT)) {
      impostor = http.createServer((_req, res) => res.end('{"ok":true}'));
      await new Promise<void>((resolve) => impostor!.listen(PREFERRED_CONSOLE_PORT, '127.0.0.1', resolve));
    }
    gatewayPort = await getFreePort();
    first = makeRun(stateDir, gatewayPort);
    runs.push(first);
    await untilRunning(first);
  }, START_TIMEOUT_MS + 10_000);

  afterAll(async () => {
    for (const run of runs) if (run.child.exitCode === null) run.child.kill('SIGTERM');
    await Promise.all(runs.map((run) => run.exited));
    fs.rmSync(stateDir, { recursive: true, force: true });
    fs.rmSync(otherStateDir, { recursive: true, force: true });
    await new Promise((resolve) => (impostor ? impostor.close(resolve) : resolve(undefined)));
  }, 60_000);

  it("when the console's default port is held by a server that answers /healthz, then make run says so before starting, and prints the URL of the console it started, which answers with its own pid", async () => {
    // The console's sign-in is printed last, after "Settee is running".
    const output = await waitFor(
      'the console sign-in',
      async () => (first.output().includes('Console: ') ? first.output() : undefined),
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    const moved = new RegExp(
      `port ${PREFERRED_CONSOLE_PORT}, the console's default, is taken \\(by another process\\); the console uses (\\d+)`,
    ).exec(output);
    expect(moved).not.toBeNull();
    expect(output.indexOf(moved![0])).toBeLessThan(output.indexOf('starting the control plane'));
    const printed = /Console: (http:\/\/127\.0\.0\.1:(\d+))/.exec(output);
    expect(printed?.[2]).toBe(moved![1]);
    const health = (await (await fetch(`${printed![1]}/healthz`)).json()) as { pid: number };
    expect(platformPids(stateDir)).toContain(health.pid);
    expect(output).not.toMatch(/EADDRINUSE/);
  }, 60_000);

  it('when a second make run starts on the same state folder, then it stops at once, naming the first and how to stop it', async () => {
    const second = makeRun(stateDir, await getFreePort());
    runs.push(second);
    expect(await second.exited).toBe(1);
    expect(second.output()).toContain(
      `another \`make run\` (pid ${first.child.pid}) is running on ${stateDir}; stop it first`,
    );
    // The first one's files are untouched and it still serves.
    expect(fs.readFileSync(path.join(stateDir, 'run.pid'), 'utf8').trim()).toBe(String(first.child.pid));
    expect((await fetch(`http://127.0.0.1:${gatewayPort}/healthz`)).ok).toBe(true);
  }, 60_000);

  it('when a second make run wants the port the first gateway holds, then it stops before starting anything, saying so', async () => {
    const second = makeRun(otherStateDir, gatewayPort);
    runs.push(second);
    expect(await second.exited).toBe(1);
    expect(second.output()).toContain(
      `port ${gatewayPort} on 127.0.0.1, where the gateway listens, is taken (by another \`make run\`?)`,
    );
    expect(second.output()).not.toContain('started gateway');
    expect(fs.existsSync(path.join(otherStateDir, 'etcd'))).toBe(false);
  }, 60_000);

  it('when the gateway is killed, then make run says so and starts it again on the same port', async () => {
    const pid = Number(/started gateway at \S+ \(pid (\d+)/.exec(first.output())?.[1]);
    expect(isProcessAlive(pid)).toBe(true);
    process.kill(pid, 'SIGKILL');
    await waitFor(
      'the gateway to be started again',
      async () =>
        first.output().includes('gateway exited (SIGKILL); starting it again at once') ? true : undefined,
      { timeoutMs: 15_000 },
    );
    await waitFor(
      'the gateway to answer again',
      async () => ((await fetch(`http://127.0.0.1:${gatewayPort}/healthz`)).ok ? true : undefined),
      { timeoutMs: 60_000, intervalMs: 250 },
    );
  }, 90_000);

  it('when make run is killed with SIGKILL, then every child ends; started again, it brings back the same instance with its data, and credentials of the first run still authenticate', async () => {
    await waitFor(
      'the example instance to run',
      async () => ((await notesInstance(stateDir)).phase === 'Running' ? true : undefined),
      {
        timeoutMs: 90_000,
        intervalMs: 250,
      },
    );
    const before = await notesInstance(stateDir);
    const url = await notesUrl(stateDir);
    expect((await couch(url, '/kept', { method: 'PUT' })).status).toBe(201);
    expect((await couch(url, '/kept/doc', { method: 'PUT', body: JSON.stringify({ v: 1 }) })).status).toBe(
      201,
    );

    // The admin identity the first run's kubeconfig carries (a client certificate of its CA).
    const firstUser = kubeConfigOf(stateDir).getCurrentUser();

    const pids = platformPids(stateDir).filter((pid) => pid !== first.child.pid);
    expect(pids.length).toBeGreaterThan(5);
    first.child.kill('SIGKILL');
    await waitFor('every child to end', async () => (pids.some(isProcessAlive) ? undefined : true), {
      timeoutMs: 30_000,
      intervalMs: 250,
    });
    expect(await isPortOpen(gatewayPort)).toBe(false);

    const again = makeRun(stateDir, gatewayPort);
    runs.push(again);
    await untilRunning(again);
    expect((await notesInstance(stateDir)).uid).toBe(before.uid);
    const urlAgain = await notesUrl(stateDir);
    expect(urlAgain.password).toBe(url.password);
    // The PKI was kept with etcd: the first run's client certificate is honoured by the new API server.
    const restarted = kubeConfigOf(stateDir);
    const withFirstUser = new KubeConfig();
    const cluster = restarted.getCurrentCluster();
    if (!cluster || !firstUser) throw new Error('the kubeconfigs name no cluster or user');
    withFirstUser.loadFromOptions({
      clusters: [cluster],
      users: [firstUser],
      contexts: [{ name: 'first', cluster: cluster.name, user: firstUser.name }],
      currentContext: 'first',
    });
    const namespaces = await withFirstUser.makeApiClient(CoreV1Api).listNamespace();
    expect(namespaces.items.map((ns) => ns.metadata?.name)).toContain('default');
    // A request wakes it if needed; the document written before the kill is there.
    const doc = await couch(urlAgain, '/kept/doc');
    expect(doc.status).toBe(200);
    expect(((await doc.json()) as { v: number }).v).toBe(1);
  }, 300_000);

  it('when make run gets a Ctrl-C, then it stops every part in order (the operator releases its Lease on a running API server, the gateway keeps its Redis to the end) and exits 0', async () => {
    const run = runs.at(-1)!;
    await untilRunning(run);
    // make run says it is running once its parts answer; the operator may still be taking its
    // Lease (later on a machine busy starting CouchDB engines), and only a holder releases it.
    await waitFor(
      'the operator to hold its Lease',
      async () => (run.output().includes('"message":"became leader"') ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    const pids = platformPids(stateDir).filter((pid) => pid !== run.child.pid);
    const before = run.output().length;
    // What the terminal does on Ctrl-C: SIGINT to every process of the foreground group. Only
    // make run itself is in it; Redis, etcd and the API server must outlive the gateway and the
    // operator, which are stopped first.
    process.kill(-run.child.pid!, 'SIGINT');
    expect(await run.exited).toBe(0);
    const stopping = run.output().slice(before);
    expect(stopping).toContain('SIGINT: stopping the local platform');
    expect(stopping).toContain('released the Lease');
    expect(stopping.split('\n').filter((line) => line.includes('queue database connection failed'))).toEqual(
      [],
    );
    await waitFor('every child to end', async () => (pids.some(isProcessAlive) ? undefined : true), {
      timeoutMs: 30_000,
      intervalMs: 250,
    });
  }, 120_000);
});
