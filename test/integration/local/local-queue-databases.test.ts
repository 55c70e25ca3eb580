import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { QueueBinding } from '../../../api/queue-binding.js';
import { provideLocalQueueDatabases } from '../../../local/local-queue-databases.js';
import { loadManifests } from '../../../local/manifests.js';
import { isProcessAlive } from '../../../local/process.js';
import { waitFor } from '../../../local/wait.js';

/** The binding's database as the platform pointed the binding at it, with the Secret's password. */
async function withDatabase<T>(
  manifests: KubernetesObject[],
  use: (client: Redis) => Promise<T>,
): Promise<T> {
  const binding = manifests.find((o) => o.kind === 'QueueBinding') as QueueBinding;
  const client = new Redis({
    host: binding.spec.connection.host,
    port: binding.spec.connection.port,
    password: 'settee-local-redis-password',
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await use(client);
  } finally {
    client.disconnect();
  }
}

describe('provideLocalQueueDatabases', () => {
  let dataRoot: string;
  let examples: KubernetesObject[];

  beforeAll(async () => {
    dataRoot = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-queue-dbs-test-'));
    examples = (await loadManifests(path.resolve('examples'))).filter(
      (o) => o.kind === 'QueueBinding' || o.kind === 'Secret',
    );
  });
  afterAll(async () => {
    await fs.rm(dataRoot, { recursive: true, force: true });
  });

  it("when given a data root, then the example binding's queue data written before a restart is there after it, in a folder named after the binding", async () => {
    const first = await provideLocalQueueDatabases(examples, { dataRoot });
    try {
      await withDatabase(first.manifests, (c) =>
        c.xadd('kept-stream', '*', 'body', 'queued before the restart'),
      );
    } finally {
      await Promise.all(first.servers.map((s) => s.stop()));
    }
    expect(await fs.readdir(dataRoot)).toEqual(['cache']);
    const second = await provideLocalQueueDatabases(examples, { dataRoot });
    try {
      const entries = await withDatabase(second.manifests, (c) => c.xrange('kept-stream', '-', '+'));
      expect(entries.map(([, fields]) => fields)).toEqual([['body', 'queued before the restart']]);
    } finally {
      await Promise.all(second.servers.map((s) => s.stop()));
    }
  });

  it('when given appendfsync always, then its databases fsync before each answer, and by default every second', async () => {
    const appendfsync = async (options: { appendfsync?: 'always' }): Promise<unknown> => {
      const provided = await provideLocalQueueDatabases(examples, options);
      try {
        return await withDatabase(provided.manifests, (c) => c.config('GET', 'appendfsync'));
      } finally {
        await Promise.all(provided.servers.map((s) => s.stop()));
      }
    };
    expect(await appendfsync({ appendfsync: 'always' })).toEqual(['appendfsync', 'always']);
    expect(await appendfsync({})).toEqual(['appendfsync', 'everysec']);
  });

  it('when given none, then each start is empty (tests)', async () => {
    const first = await provideLocalQueueDatabases(examples);
    try {
      await withDatabase(first.manifests, (c) => c.set('gone', 'yes'));
    } finally {
      await Promise.all(first.servers.map((s) => s.stop()));
    }
    const second = await provideLocalQueueDatabases(examples);
    try {
      expect(await withDatabase(second.manifests, (c) => c.get('gone'))).toBeNull();
    } finally {
      await Promise.all(second.servers.map((s) => s.stop()));
    }
  });

  it("when given a log and the binding's redis-server is SIGKILLed, then it is started again on the same port with what its append-only file holds, and the restart is logged", async () => {
    const messages: string[] = [];
    const dataRootOfThis = path.join(dataRoot, 'restarted');
    const provided = await provideLocalQueueDatabases(examples, {
      dataRoot: dataRootOfThis,
      log: (m) => messages.push(m),
    });
    try {
      const [server] = provided.servers;
      await withDatabase(provided.manifests, (c) => c.set('before-the-crash', 'kept'));
      const crashed = server!.pid;
      process.kill(crashed, 'SIGKILL');
      await waitFor(
        'the restarted redis-server to answer',
        async () =>
          server!.pid !== crashed
            ? withDatabase(provided.manifests, (c) => c.get('before-the-crash')).then(
                (value) => (value === 'kept' ? true : undefined),
                () => undefined,
              )
            : undefined,
        { timeoutMs: 20_000, intervalMs: 100 },
      );
      expect(isProcessAlive(crashed)).toBe(false);
      expect(messages).toEqual([
        expect.stringMatching(
          /^redis-server:\d+ exited \(SIGKILL\); starting it again at once \(QueueBinding \S+\)$/,
        ),
      ]);
    } finally {
      await Promise.all(provided.servers.map((s) => s.stop()));
    }
    expect(provided.servers.every((s) => !isProcessAlive(s.pid))).toBe(true);
  });
});
