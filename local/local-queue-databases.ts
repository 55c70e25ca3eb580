import path from 'node:path';
import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import { QUEUE_BINDING_KIND, type QueueBinding } from '../api/queue-binding.js';
import { startRedis, type RedisServer } from './redis-server.js';

/**
 * The example QueueBindings name a Redis/Valkey database that, in a cluster, would already exist.
 * On one machine the local platform provides it: one redis-server per binding, started with the
 * password from the binding's Secret (found among the same manifests), and the binding is pointed
 * at it, since its example port may be taken or unknown here. With `dataRoot` (make run: beside
 * etcd's data) each binding's database is kept in `<dataRoot>/<binding>` across restarts, as the
 * cluster's state is: queued messages, schedules and dead letters come back with the binding.
 * With `log`, a database that exits (a crash, a SIGKILL) is started again on its port, on its
 * append-only file, and the restart is logged, as its pod would be restarted in a cluster.
 */
export async function provideLocalQueueDatabases(
  manifests: KubernetesObject[],
  options: {
    dataRoot?: string;
    log?: (message: string) => void;
    /** The databases' appendfsync (redis-server.ts; default everysec, Redis's own). */
    appendfsync?: 'always' | 'everysec';
  } = {},
): Promise<{ manifests: KubernetesObject[]; servers: RedisServer[] }> {
  const servers: RedisServer[] = [];
  try {
    const adapted: KubernetesObject[] = [];
    for (const object of manifests) {
      if (object.kind !== QUEUE_BINDING_KIND) {
        adapted.push(object);
        continue;
      }
      const binding = object as QueueBinding;
      const server = await startRedis({
        password: findPassword(manifests, binding),
        ...(options.appendfsync ? { appendfsync: options.appendfsync } : {}),
        ...(options.dataRoot ? { dataDir: path.join(options.dataRoot, binding.metadata.name ?? '') } : {}),
        ...(options.log && {
          restartOnExit: {
            log: (m: string) => options.log?.(`${m} (QueueBinding ${binding.metadata.name})`),
          },
        }),
      });
      servers.push(server);
      adapted.push({
        ...binding,
        spec: {
          ...binding.spec,
          connection: { ...binding.spec.connection, host: server.host, port: server.port, tls: false },
        },
      } as KubernetesObject);
    }
    return { manifests: adapted, servers };
  } catch (err) {
    await Promise.all(servers.map((s) => s.stop()));
    throw err;
  }
}

function findPassword(manifests: KubernetesObject[], binding: QueueBinding): string {
  const ref = binding.spec.connection.passwordSecretRef;
  const secret = manifests.find((o) => o.kind === 'Secret' && o.metadata?.name === ref.name) as
    V1Secret | undefined;
  const value =
    secret?.stringData?.[ref.key] ??
    (secret?.data?.[ref.key]
      ? Buffer.from(secret.data[ref.key] ?? '', 'base64').toString('utf8')
      : undefined);
  if (!value) {
    throw new Error(
      `QueueBinding ${binding.metadata.name}: its password Secret ${ref.name} (key ${ref.key}) must be among the example manifests`,
    );
  }
  return value;
}
