import { SETTEE_API_VERSION } from '../../../../../api/contract.js';
import type { QueueBinding } from '../../../../../api/queue-binding.js';
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
  it('when built, then it holds exactly the four VQUEUE_* keys with their values, the next key empty', () => {
    const secret = buildQueueEnvSecret(binding, env);
    expect(decode(secret.data)).toEqual(env);
    expect(secret.stringData).toBeUndefined();
    expect(secret.type).toBe('Opaque');
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
