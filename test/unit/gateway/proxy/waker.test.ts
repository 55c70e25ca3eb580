import { SETTEE_API_VERSION } from '../../../../api/contract.js';
import type { CouchInstance } from '../../../../api/couch-instance.js';
import { createSilentLogger } from '../../../../observability/logger.js';
import type { InstanceRef } from '../../../../gateway/instance-ref.js';
import { Waker } from '../../../../gateway/proxy/waker.js';

const hibernated = (hibernatedAt: string): CouchInstance => ({
  apiVersion: SETTEE_API_VERSION,
  kind: 'CouchInstance',
  metadata: { name: 'app', namespace: 'ns', annotations: {} },
  spec: {},
  status: { phase: 'Hibernated', hibernatedAt },
});

function newWaker(): { waker: Waker; writes: string[] } {
  const writes: string[] = [];
  const waker = new Waker({
    write: async (instance: InstanceRef, requestedAt: string) => {
      writes.push(`${instance.namespace}/${instance.name}@${requestedAt}`);
    },
    lookup: () => undefined,
    isWanted: () => true,
    retryIntervalMs: 60_000,
    logger: createSilentLogger(),
    now: () => new Date('2026-01-01T12:00:00.000Z'),
  });
  return { waker, writes };
}

describe('Waker', () => {
  it('when many requests wait on one hibernation, then the wake is asked for once, and again for the next hibernation', () => {
    const { waker, writes } = newWaker();
    for (let i = 0; i < 5; i++) waker.ensureAwake(hibernated('2026-01-01T11:00:00Z'));
    expect(writes).toEqual(['ns/app@2026-01-01T12:00:00.000Z']);
    waker.ensureAwake(hibernated('2026-01-01T11:30:00Z'));
    expect(writes).toHaveLength(2);
    waker.stop();
  });

  it('when an instance is forgotten (deleted), then nothing is remembered of it: the same hibernation asks again', () => {
    const { waker, writes } = newWaker();
    waker.ensureAwake(hibernated('2026-01-01T11:00:00Z'));
    waker.forget('ns/app');
    waker.ensureAwake(hibernated('2026-01-01T11:00:00Z'));
    expect(writes).toHaveLength(2);
    waker.stop();
  });
});
