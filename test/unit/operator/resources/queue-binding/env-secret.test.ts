import { SETTEE_API_VERSION } from '../../../../../api/contract.js';
import type { QueueBinding } from '../../../../../api/queue-binding.js';
import { parseQStashFormatToken } from '../../../../../api/qstash-token.js';
import {
  buildQueueEnvSecret,
  isEnvSecretUpToDate,
} from '../../../../../operator/resources/queue-binding/env-secret.js';

const binding: QueueBinding = {
  apiVersion: SETTEE_API_VERSION,
  kind: 'QueueBinding',
  metadata: { name: 'cache', namespace: 'tenant-a', uid: 'uid-1', generation: 2 },
  spec: {
    engine: 'valkey',
    connection: { host: 'cache.tenant-a.svc', passwordSecretRef: { name: 'cache-auth', key: 'password' } },
  },
};
const env = {
  VQUEUE_URL: 'https://queue.example.com/queue/tenant-a/cache',
  VQUEUE_TOKEN: 'p@ss',
  VQUEUE_CURRENT_SIGNING_KEY: 'sig_current',
  VQUEUE_NEXT_SIGNING_KEY: '',
};
const decode = (data: Record<string, string> | undefined) =>
  Object.fromEntries(
    Object.entries(data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
  );

describe('the env Secret builder', () => {
  it('when built, then it holds exactly the five VQUEUE_* keys: the four given, the next key empty, and the token in QStash format', () => {
    const secret = buildQueueEnvSecret(binding, env);
    const { VQUEUE_QSTASH_TOKEN: qstashToken, ...given } = decode(secret.data);
    expect(given).toEqual(env);
    // What the workflow SDK decodes (base64 of {"UserID", "Password"}) and the gateway accepts.
    expect(JSON.parse(Buffer.from(qstashToken ?? '', 'base64').toString('utf8'))).toEqual({
      UserID: 'tenant-a.cache',
      Password: 'p@ss',
    });
    expect(parseQStashFormatToken(qstashToken ?? '')).toEqual({ userId: 'tenant-a.cache', password: 'p@ss' });
    expect(secret.stringData).toBeUndefined();
    expect(secret.type).toBe('Opaque');
  });

  it('when the token changes, then the QStash-format token follows it, and another binding gets its own user id', () => {
    const qstashTokenOf = (secret: ReturnType<typeof buildQueueEnvSecret>) =>
      parseQStashFormatToken(decode(secret.data).VQUEUE_QSTASH_TOKEN ?? '');
    expect(qstashTokenOf(buildQueueEnvSecret(binding, { ...env, VQUEUE_TOKEN: 'new "pass"' }))).toEqual({
      userId: 'tenant-a.cache',
      password: 'new "pass"',
    });
    const other = { ...binding, metadata: { ...binding.metadata, namespace: 'tenant-b', name: 'jobs' } };
    expect(qstashTokenOf(buildQueueEnvSecret(other, env))).toEqual({
      userId: 'tenant-b.jobs',
      password: 'p@ss',
    });
    expect(
      isEnvSecretUpToDate(
        buildQueueEnvSecret(binding, env),
        buildQueueEnvSecret(binding, { ...env, VQUEUE_TOKEN: 'rotated' }),
      ),
    ).toBe(false);
  });

  it('when built, then it is named after the binding, labelled for the gateway, and owned by the binding', () => {
    const secret = buildQueueEnvSecret(binding, env);
    expect(secret.metadata).toMatchObject({
      name: 'cache-vqueue',
      namespace: 'tenant-a',
      labels: {
        'settee.dev/queue-binding': 'cache',
        'settee.dev/instance': 'cache',
        'app.kubernetes.io/managed-by': 'settee-operator',
      },
      ownerReferences: [
        {
          apiVersion: SETTEE_API_VERSION,
          kind: 'QueueBinding',
          name: 'cache',
          uid: 'uid-1',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    });
  });

  it('when the stored Secret matches, then it is up to date, and any changed value, extra key or lost owner makes it stale', () => {
    const desired = buildQueueEnvSecret(binding, env);
    expect(isEnvSecretUpToDate(structuredClone(desired), desired)).toBe(true);
    expect(isEnvSecretUpToDate(undefined, desired)).toBe(false);
    expect(
      isEnvSecretUpToDate(
        buildQueueEnvSecret(binding, { ...env, VQUEUE_NEXT_SIGNING_KEY: 'sig_next' }),
        desired,
      ),
    ).toBe(false);
    expect(isEnvSecretUpToDate({ ...desired, data: { ...desired.data, EXTRA: 'eA==' } }, desired)).toBe(
      false,
    );
    expect(
      isEnvSecretUpToDate({ ...desired, metadata: { ...desired.metadata, ownerReferences: [] } }, desired),
    ).toBe(false);
  });
});
