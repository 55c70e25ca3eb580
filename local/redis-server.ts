import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { launchOnFreePort } from './launch.js';
import { startProcess } from './process.js';
import { supervise, type SupervisedProcess } from './supervise.js';

/**
 * The servers startRedis runs: Debian's redis-server (`apt-get install redis-server`), or
 * valkey-server (Debian's, from bookworm-backports), which speaks the same protocol and reads the
 * same config file. Each Debian package is named after its binary.
 */
export const DATABASE_SERVER_BINS = {
  redis: '/usr/bin/redis-server',
  valkey: '/usr/bin/valkey-server',
} as const;
type DatabaseServerName = keyof typeof DATABASE_SERVER_BINS;

/**
 * Picks the server startRedis runs when it is given no `bin`: `redis` (the default) or `valkey`,
 * so the local platform and the queue's tests run on either (make test runs a set of queue suites
 * with it set to valkey).
 */
export const DATABASE_SERVER_ENV = 'SETTEE_DATABASE_SERVER';

/** The binary {@link DATABASE_SERVER_ENV} names; an unknown name is an error, not Redis. */
export function defaultDatabaseServerBin(env: NodeJS.ProcessEnv = process.env): string {
  const name = env[DATABASE_SERVER_ENV] || 'redis';
  if (!Object.hasOwn(DATABASE_SERVER_BINS, name))
    throw new Error(
      `${DATABASE_SERVER_ENV}=${name}: expected one of ${Object.keys(DATABASE_SERVER_BINS).join(', ')}`,
    );
  return DATABASE_SERVER_BINS[name as DatabaseServerName];
}

export interface RedisServerOptions {
  /** AUTH password (default: a generated one). */
  password?: string;
  /**
   * Where Redis keeps its data; kept on stop, with the append-only file on so the data survives a
   * restart. Default: a temporary folder, removed on stop, and no persistence at all.
   */
  dataDir?: string;
  /** The server binary (default: the one {@link DATABASE_SERVER_ENV} names, redis-server unless told). */
  bin?: string;
  /**
   * How often the append-only file is fsynced (default `everysec`, Redis's own default). `always`
   * fsyncs before each reply, so a crash loses nothing Redis acknowledged.
   */
  appendfsync?: 'always' | 'everysec';
  /**
   * Start it again, on the same port and with the same settings, whenever it exits without being
   * stopped (a crash, an OOM kill), as its StatefulSet would in a cluster; with `dataDir` it comes
   * back with what its append-only file holds. Each restart is told to `log`. Default: off (tests
   * that crash Redis on purpose restart it themselves).
   */
  restartOnExit?: { log: (message: string) => void };
  /**
   * The loopback port (default: a free one). A test that stops Redis and starts it again on its
   * data passes the first server's port, so clients reconnect to the same address, as to a restarted
   * pod behind its Service.
   */
  port?: number;
}

/** A throwaway redis-server on a loopback port, password protected. */
export interface RedisServer {
  host: '127.0.0.1';
  port: number;
  password: string;
  /** redis://:<password>@127.0.0.1:<port> (the password URL-encoded). */
  url: string;
  /** The running server's pid (a new one after each restart). */
  readonly pid: number;
  /** Stops the server and removes its temporary folder (not `dataDir`). Safe to call twice. */
  stop(): Promise<void>;
  /**
   * Kills the server with SIGKILL, as a crash: nothing is flushed on the way out. Resolves once it
   * is gone and its temporary folder removed; stop() after it does nothing.
   */
  kill(): Promise<void>;
}

export class RedisServerNotInstalledError extends Error {
  readonly code = 'REDIS_SERVER_NOT_INSTALLED';

  constructor(
    readonly bin: string,
    options?: { cause?: unknown },
  ) {
    super(`${bin} was not found: run \`apt-get install ${path.basename(bin)}\` or \`make deps\``, options);
    this.name = 'RedisServerNotInstalledError';
  }
}

const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 15_000;
const PING_TIMEOUT_MS = 1_000;

/**
 * Starts redis-server on a free loopback port and resolves once an authenticated PING answers.
 * The settings go through a config file in a private temporary folder rather than the command line,
 * so the password does not show in the process list.
 */
export async function startRedis(options: RedisServerOptions = {}): Promise<RedisServer> {
  const bin = options.bin ?? defaultDatabaseServerBin();
  await fs.access(bin, fs.constants.X_OK).catch((err: unknown) => {
    throw new RedisServerNotInstalledError(bin, { cause: err });
  });
  const password = options.password ?? randomBytes(24).toString('hex');
  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-redis-'));
  const dataDir = options.dataDir ? path.resolve(options.dataDir) : workDir;
  if (options.dataDir) await fs.mkdir(dataDir, { recursive: true });
  const removeWorkDir = (): Promise<void> => fs.rm(workDir, { recursive: true, force: true });

  const configFile = path.join(workDir, 'redis.conf');
  // Kept with the data (each restart appends; past LOG_FILE_MAX_BYTES the older lines move to
  // redis.log.1): what Redis said before a crash, e.g. a late AOF fsync.
  const logFile = options.dataDir ? path.join(dataDir, 'redis.log') : undefined;
  const launched = await launchOnFreePort({
    what: 'redis-server',
    port: options.port,
    async start(port) {
      const config = buildRedisConfig({
        port,
        password,
        dataDir,
        persistent: dataDir !== workDir,
        appendfsync: options.appendfsync ?? 'everysec',
      });
      await fs.writeFile(configFile, config, { mode: 0o600 });
      return startProcess({ name: `redis-server:${port}`, command: bin, args: [configFile], logFile });
    },
    isReady: (port) => pingWithAuth(port, password),
    readyTimeoutMs: READY_TIMEOUT_MS,
    intervalMs: 50,
  }).catch(async (err: unknown) => {
    await removeWorkDir();
    throw err;
  });
  const name = `redis-server:${launched.port}`;
  // The config file written for the first run names the port, so a restart reads the same one.
  const supervised: SupervisedProcess | undefined = options.restartOnExit
    ? supervise({
        name,
        first: launched.process,
        start: () => startProcess({ name, command: bin, args: [configFile], logFile }),
        log: options.restartOnExit.log,
      })
    : undefined;
  const current = () => supervised?.current() ?? launched.process;
  let stopped: Promise<void> | undefined;
  return {
    host: HOST,
    port: launched.port,
    password,
    url: `redis://:${encodeURIComponent(password)}@${HOST}:${launched.port}`,
    get pid() {
      return current().pid;
    },
    stop: () => (stopped ??= (supervised ?? launched.process).stop().then(removeWorkDir)),
    kill: () =>
      (stopped ??= (async () => {
        const run = current();
        process.kill(run.pid, 'SIGKILL');
        // Before the exit is seen, so this crash is not restarted.
        await supervised?.stop();
        await run.exited;
        await removeWorkDir();
      })()),
  };
}

function buildRedisConfig(options: {
  port: number;
  password: string;
  dataDir: string;
  persistent: boolean;
  appendfsync: 'always' | 'everysec';
}): string {
  const lines = [
    `bind ${HOST}`,
    `port ${options.port}`,
    'protected-mode yes',
    `requirepass ${quoteConfigValue(options.password)}`,
    `dir ${quoteConfigValue(options.dataDir)}`,
    'daemonize no',
    'logfile ""',
    // No RDB snapshots either way; with a dataDir, the append-only file keeps every write.
    'save ""',
    `appendonly ${options.persistent ? 'yes' : 'no'}`,
    `appendfsync ${options.appendfsync}`,
  ];
  return `${lines.join('\n')}\n`;
}

/** A double-quoted redis.conf string: backslash and quote escaped, anything not printable ASCII as \xHH. */
function quoteConfigValue(value: string): string {
  let quoted = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const char = String.fromCharCode(byte);
    if (char === '\\' || char === '"') quoted += `\\${char}`;
    else if (byte >= 0x20 && byte <= 0x7e) quoted += char;
    else quoted += `\\x${byte.toString(16).padStart(2, '0')}`;
  }
  return `"${quoted}"`;
}

/**
 * Sends AUTH and PING over a raw RESP connection; true on PONG, undefined while Redis is still
 * loading, an error for anything else (a refused connection included, so waitFor keeps polling).
 */
function pingWithAuth(port: number, password: string): Promise<true | undefined> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: HOST, port });
    let received = '';
    const finish = (error: Error | undefined, value?: true): void => {
      socket.destroy();
      if (error) reject(error);
      else resolve(value);
    };
    socket.setTimeout(PING_TIMEOUT_MS, () => finish(new Error('PING timed out')));
    socket.once('error', (err) => finish(err));
    socket.once('connect', () => socket.write(`${respCommand('AUTH', password)}${respCommand('PING')}`));
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
      const replies = received.split('\r\n');
      if (replies.length < 3) return;
      const [auth = '', ping = ''] = replies;
      if (!auth.startsWith('+')) finish(new Error(`AUTH failed: ${auth}`));
      else if (ping === '+PONG') finish(undefined, true);
      else if (ping.startsWith('-LOADING')) finish(undefined);
      else finish(new Error(`unexpected PING reply: ${ping}`));
    });
  });
}

function respCommand(...parts: string[]): string {
  return `*${parts.length}\r\n${parts.map((p) => `$${Buffer.byteLength(p)}\r\n${p}\r\n`).join('')}`;
}
