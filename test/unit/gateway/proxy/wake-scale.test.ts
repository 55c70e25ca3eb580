import { SETTEE_API_VERSION } from '../../../../api/contract.js';
import type { CouchInstance } from '../../../../api/couch-instance.js';
import { KubeApiError } from '../../../../kube/errors.js';
import { createSilentLogger } from '../../../../observability/logger.js';
import type { InstanceRef } from '../../../../gateway/instance-ref.js';
import { mayScaleForWake } from '../../../../gateway/proxy/wake-scale.js';
import { Waker } from '../../../../gateway/proxy/waker.js';

const HIBERNATED_AT = '2026-01-01T11:00:00Z';

/** As the operator leaves an instance it hibernated: its status computed from the current spec. */
const hibernated = (changes: { metadata?: object; status?: object } = {}): CouchInstance => ({
  apiVersion: SETTEE_API_VERSION,
  kind: 'CouchInstance',
  metadata: { name: 'app', namespace: 'ns', generation: 3, annotations: {}, ...changes.metadata },
  spec: {},
  status: { phase: 'Hibernated', hibernatedAt: HIBERNATED_AT, observedGeneration: 3, ...changes.status },
});

const degraded = {
  type: 'Degraded',
  status: 'True',
  reason: 'ReconcileFailed',
  message: 'x',
  lastTransitionTime: HIBERNATED_AT,
};

describe('mayScaleForWake', () => {
  it('when the operator hibernated this very spec and nothing is wrong, then the gateway may scale', () => {
    expect(mayScaleForWake(hibernated())).toBe(true);
  });

  it.each([
    ['still Hibernating (its scale to zero not done)', { status: { phase: 'Hibernating' } }],
    ['Failed (an invalid spec: the operator makes no StatefulSet for it)', { status: { phase: 'Failed' } }],
    ['changed since the operator looked (generation 4, status of 3)', { metadata: { generation: 4 } }],
    ['with no observedGeneration', { status: { observedGeneration: undefined } }],
    ['Degraded', { status: { conditions: [degraded] } }],
    ['being deleted', { metadata: { deletionTimestamp: HIBERNATED_AT } }],
  ])('when the instance is %s, then the wake is left to the operator', (_what, changes) => {
    expect(mayScaleForWake(hibernated(changes))).toBe(false);
  });
});

describe('Waker with a scale writer', () => {
  function newWaker(scale: (instance: InstanceRef) => Promise<void>): { waker: Waker; writes: string[] } {
    const writes: string[] = [];
    const waker = new Waker({
      write: async (instance, requestedAt) => {
        writes.push(`annotation ${instance.name}@${requestedAt}`);
      },
      scale: async (instance) => {
        writes.push(`scale ${instance.name}`);
        await scale(instance);
      },
      lookup: () => undefined,
      isWanted: () => true,
      retryIntervalMs: 60_000,
      logger: createSilentLogger(),
      now: () => new Date('2026-01-01T12:00:00.000Z'),
    });
    return { waker, writes };
  }

  it('when requests wait on a hibernated instance, then the annotation and the scale are sent at once, once per hibernation', () => {
    const { waker, writes } = newWaker(async () => {});
    for (let i = 0; i < 3; i++) waker.ensureAwake(hibernated());
    // Both sent in the same turn, before either is answered: the annotation first, it is the authority.
    expect(writes).toEqual(['annotation app@2026-01-01T12:00:00.000Z', 'scale app']);
    waker.stop();
  });

  it('when the operator would not wake it, then only the annotation is sent', () => {
    const { waker, writes } = newWaker(async () => {});
    waker.ensureAwake(hibernated({ status: { phase: 'Failed' } }));
    expect(writes).toEqual(['annotation app@2026-01-01T12:00:00.000Z']);
    waker.stop();
  });

  it('when the role refuses the Scale, then it is not tried again, and the annotations still go out', async () => {
    const refusal = new KubeApiError({
      statusCode: 403,
      message:
        'statefulsets.apps "app" is forbidden: User "gw" cannot patch resource "statefulsets/scale" in API group "apps" in the namespace "ns"',
    });
    const { waker, writes } = newWaker(() => Promise.reject(refusal));
    waker.ensureAwake(hibernated());
    await new Promise((resolve) => setImmediate(resolve));
    waker.ensureAwake(hibernated({ status: { hibernatedAt: '2026-01-01T11:30:00Z' } }));
    expect(writes).toEqual([
      'annotation app@2026-01-01T12:00:00.000Z',
      'scale app',
      'annotation app@2026-01-01T12:00:00.000Z',
    ]);
    waker.stop();
  });
});
