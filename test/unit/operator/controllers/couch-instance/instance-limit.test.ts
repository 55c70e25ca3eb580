import type { CouchInstance, CouchInstanceSpec } from '../../../../../api/couch-instance.js';
import { findInstanceLimitExcess } from '../../../../../operator/controllers/couch-instance/instance-limit.js';

const instance = (name: string, createdAt: string, spec: CouchInstanceSpec = {}): CouchInstance => ({
  apiVersion: 'settee.dev/v1alpha1',
  kind: 'CouchInstance',
  metadata: { name, namespace: 'team-a', creationTimestamp: createdAt as unknown as Date },
  spec,
});

describe('findInstanceLimitExcess', () => {
  const a = instance('a', '2026-11-24T10:00:00Z');
  const b = instance('b', '2026-11-24T10:01:00Z');
  const c = instance('c', '2026-11-24T10:02:00Z');
  const all = [a, b, c];

  it('when a namespace holds as many free instances as the limit, then the newest one waits with a message naming the limit', () => {
    const provisioned = new Set(['a', 'b']);
    const check = (x: CouchInstance) =>
      findInstanceLimitExcess({
        instance: x,
        namespaceInstances: all,
        isProvisioned: (n) => provisioned.has(n),
        limit: 2,
      });
    expect(check(a)).toBeUndefined();
    expect(check(b)).toBeUndefined();
    expect(check(c)).toBe(
      'namespace team-a already has 2 free instances, the free limit is 2: delete one or move one to plan: paid (this one is created once there is room)',
    );
  });

  it('when none is provisioned yet, then the older ones come first, and the name breaks a tie within the same second', () => {
    const twin = instance('b0', '2026-11-24T10:01:00Z');
    const check = (x: CouchInstance) =>
      findInstanceLimitExcess({
        instance: x,
        namespaceInstances: [...all, twin],
        isProvisioned: () => false,
        limit: 2,
      });
    // 'b' sorts before 'b0': it is ahead of its twin.
    expect([a, b, twin, c].map((x) => check(x) === undefined)).toEqual([true, true, false, false]);
  });

  it('when paid instances, instances being deleted, or instances already provisioned are involved, then paid ones neither count nor wait, deleted ones do not count, and provisioned ones never wait', () => {
    const paid = instance('paid', '2026-11-24T09:00:00Z', { plan: 'paid' });
    const going = {
      ...instance('going', '2026-11-24T09:30:00Z'),
      metadata: { ...a.metadata, name: 'going', deletionTimestamp: new Date() },
    };
    const lateButRunning = instance('late', '2026-11-24T11:00:00Z');
    const input = {
      namespaceInstances: [paid, going, a, lateButRunning],
      isProvisioned: (n: string) => n === 'late' || n === 'paid',
      limit: 1,
    };
    expect(findInstanceLimitExcess({ ...input, instance: paid })).toBeUndefined();
    expect(findInstanceLimitExcess({ ...input, instance: lateButRunning })).toBeUndefined();
    // a is older than late, but late runs: the namespace is full for a.
    expect(findInstanceLimitExcess({ ...input, instance: a })).toContain('already has 1 free instances');
  });

  it('when another namespace is full, then it does not count here: the caller passes this namespace’s instances only', () => {
    expect(
      findInstanceLimitExcess({ instance: c, namespaceInstances: [c], isProvisioned: () => true, limit: 1 }),
    ).toBeUndefined();
  });
});
