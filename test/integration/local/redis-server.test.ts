import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { LOG_FILE_MAX_BYTES } from '../../../local/log-file.js';
import { isPortOpen } from '../../../local/ports.js';
import { isProcessAlive } from '../../../local/process.js';
import { waitFor } from '../../../local/wait.js';
import {
  DATABASE_SERVER_ENV,
  defaultDatabaseServerBin,
  RedisServerNotInstalledError,
  startRedis,
  type RedisServer,
} from '../../../local/redis-server.js';

function connect(server: RedisServer, password?: string): Redis {
  const client = new Redis({
    host: server.host,
    port: server.port,
    password,
    lazyConnect: true,
    enableReadyCheck: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  return client;
}

async function withClient<T>(client: Redis, use: (client: Redis) => Promise<T>): Promise<T> {
  try {
    await client.connect();
    return await use(client);
  } finally {
    client.disconnect();
  }
}

/** Sends inline commands over a raw connection and resolves with one reply line per command. */
function sendRaw(port: number, commands: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let received = '';
    socket.once('connect', () => socket.write(commands.map((c) => `${c}\r\n`).join('')));
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
      const replies = received.split('\r\n').slice(0, -1);
      if (replies.length >= commands.length) {
        socket.destroy();
        resolve(replies);
      }
    });
    socket.once('error', reject);
  });
}

describe('startRedis', () => {
  let server: RedisServer;

  beforeAll(async () => {
    server = await startRedis();
  });

  afterAll(async () => {
    await server.stop();
  });

  it('when started without a password, then one is generated and the url carries it', () => {
    expect(server.password.length).toBeGreaterThanOrEqual(32);
    expect(server.url).toBe(`redis://:${server.password}@127.0.0.1:${server.port}`);
  });

  it('when a client authenticates with the password, then PING answers PONG', async () => {
    await expect(withClient(connect(server, server.password), (c) => c.ping())).resolves.toBe('PONG');
  });

  it('when a client connects through the url, then PING answers PONG', async () => {
    const client = new Redis(server.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => undefined);
    await expect(withClient(client, (c) => c.ping())).resolves.toBe('PONG');
  });

  it('when a client sends no password, then PING is refused with NOAUTH', async () => {
    const [ping] = await sendRaw(server.port, ['PING']);
    expect(ping).toMatch(/^-NOAUTH/);
  });

  it('when a client sends a wrong password, then AUTH is refused and PING stays refused', async () => {
    const [auth, ping] = await sendRaw(server.port, ['AUTH wrong-password', 'PING']);
    expect(auth).toMatch(/^-WRONGPASS/);
    expect(ping).toMatch(/^-NOAUTH/);
  });
});

describe('startRedis lifecycle', () => {
  it('when stopped, then the process is gone and the port is closed, and a second stop is harmless', async () => {
    const server = await startRedis();
    expect(isProcessAlive(server.pid)).toBe(true);
    await server.stop();
    expect(isProcessAlive(server.pid)).toBe(false);
    expect(await isPortOpen(server.port)).toBe(false);
    await expect(server.stop()).resolves.toBeUndefined();
  });

  it('when the password holds spaces, quotes and non-ASCII, then AUTH with it works', async () => {
    const password = 'a b"c\\d é\t;#';
    const server = await startRedis({ password });
    try {
      expect(server.url).toBe(`redis://:${encodeURIComponent(password)}@127.0.0.1:${server.port}`);
      await expect(withClient(connect(server, password), (c) => c.ping())).resolves.toBe('PONG');
    } finally {
      await server.stop();
    }
  });

  it('when two servers run at once, then each has its own port and data', async () => {
    const [a, b] = await Promise.all([startRedis(), startRedis()]);
    try {
      expect(a.port).not.toBe(b.port);
      await withClient(connect(a, a.password), (c) => c.set('key', 'a'));
      await expect(withClient(connect(b, b.password), (c) => c.get('key'))).resolves.toBeNull();
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('when a dataDir is given, then what was written before a stop is there after a restart on it', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-redis-test-'));
    try {
      const first = await startRedis({ dataDir, password: 'pw' });
      await withClient(connect(first, 'pw'), (c) => c.set('kept', 'yes'));
      await first.stop();
      const second = await startRedis({ dataDir, password: 'pw' });
      try {
        await expect(withClient(connect(second, 'pw'), (c) => c.get('kept'))).resolves.toBe('yes');
      } finally {
        await second.stop();
      }
      await expect(fs.readdir(dataDir)).resolves.not.toHaveLength(0);
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });

  it('when a persistent Redis restarts on a log at its bound, then the old lines move to redis.log.1 and redis.log stays under the bound', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-redis-test-'));
    const logFile = path.join(dataDir, 'redis.log');
    // The log of earlier runs, at its bound: each restart used to append to it without end.
    const earlier = 'an earlier run.\n'.repeat(LOG_FILE_MAX_BYTES / 16);
    await fs.writeFile(logFile, earlier);
    const restarts: string[] = [];
    const server = await startRedis({
      dataDir,
      password: 'pw',
      restartOnExit: { log: (m) => restarts.push(m) },
    });
    try {
      const readyLines = async (): Promise<number> =>
        ((await fs.readFile(logFile, 'utf8')).match(/Ready to accept connections/g) ?? []).length;
      await waitFor('the first run logged', async () => ((await readyLines()) >= 1 ? true : undefined), {
        timeoutMs: 30_000,
        intervalMs: 50,
      });
      const firstPid = server.pid;
      process.kill(firstPid, 'SIGKILL');
      await waitFor('the restart logged', async () => ((await readyLines()) >= 2 ? true : undefined), {
        timeoutMs: 60_000,
        intervalMs: 50,
      });
      expect(server.pid).not.toBe(firstPid);
      expect(restarts).toHaveLength(1);
      const now = await fs.readFile(logFile, 'utf8');
      expect(now).not.toContain('an earlier run');
      expect(Buffer.byteLength(now)).toBeLessThan(LOG_FILE_MAX_BYTES);
      await expect(fs.readFile(`${logFile}.1`, 'utf8')).resolves.toBe(earlier);
    } finally {
      await server.stop();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });

  it('when the redis-server binary is missing, then a RedisServerNotInstalledError says how to install it', async () => {
    const attempt = startRedis({ bin: '/nonexistent/redis-server' });
    await expect(attempt).rejects.toBeInstanceOf(RedisServerNotInstalledError);
    await expect(attempt).rejects.toThrow(/apt-get install redis-server/);
  });

  it('when SETTEE_DATABASE_SERVER is valkey, then startRedis runs valkey-server with the same settings', async () => {
    const saved = process.env[DATABASE_SERVER_ENV];
    process.env[DATABASE_SERVER_ENV] = 'valkey';
    let server: RedisServer | undefined;
    try {
      server = await startRedis();
      const info = await withClient(connect(server, server.password), (client) => client.info('server'));
      expect(info).toMatch(/^server_name:valkey\r?$/m);
    } finally {
      if (saved === undefined) delete process.env[DATABASE_SERVER_ENV];
      else process.env[DATABASE_SERVER_ENV] = saved;
      await server?.stop();
    }
  });

  it('when SETTEE_DATABASE_SERVER names no known server, then it is an error, not Redis', () => {
    expect(() => defaultDatabaseServerBin({ [DATABASE_SERVER_ENV]: 'keydb' })).toThrow(
      'SETTEE_DATABASE_SERVER=keydb: expected one of redis, valkey',
    );
    expect(defaultDatabaseServerBin({})).toBe('/usr/bin/redis-server');
  });
});
