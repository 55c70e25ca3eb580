import { fileURLToPath } from 'node:url';
import { loadManifests } from '../../../local/manifests.js';
import type { CouchInstance, CouchInstanceSpec } from '../../../api/couch-instance.js';
import { toKubeApiError } from '../../../kube/errors.js';
import type { RunningOperator } from '../../../operator/operator.js';
import { useTestNamespace } from '../../helpers/kube.js';
import {
  conditionOf,
  createInstance,
  hasPhase,
  startTestOperator,
  waitForEventReasons,
  waitForInstance,
} from '../../helpers/operator/couch-instance-harness.js';

/** The API server's answer to creating an instance with `spec`: its 422 message, or "accepted". */
async function admission(namespace: string, name: string, spec: object): Promise<string> {
  try {
    await createInstance(namespace, name, spec as CouchInstanceSpec);
    return 'accepted';
  } catch (err) {
    const apiError = toKubeApiError(err);
    if (apiError?.statusCode !== 422) throw err;
    return apiError.message;
  }
}

describe('CouchInstance validation', () => {
  const ns = useTestNamespace('couch-validation');

  it('when plan free asks for keepAlive, then the API server rejects it: "keepAlive requires plan: paid"', async () => {
    expect(await admission(ns.name, 'a', { plan: 'free', keepAlive: true })).toContain(
      'keepAlive requires plan: paid',
    );
  });

  it('when the version is 2.3.1, then the API server rejects it as outside CouchDB 3.x', async () => {
    expect(await admission(ns.name, 'b', { version: '2.3.1' })).toContain(
      'version must be a CouchDB 3.x release such as 3.5.1; other major versions are not supported',
    );
  });

  it('when add-ons are set on plan free, then the API server names each one as requiring plan: paid', async () => {
    const message = await admission(ns.name, 'c', {
      addons: {
        backups: { schedule: '0 3 * * *' },
        regionPinning: { region: 'eu-west-1' },
        largerStorage: { size: '5Gi' },
      },
    });
    expect(message).toContain('addons.backups requires plan: paid');
    expect(message).toContain('addons.regionPinning requires plan: paid');
    expect(message).toContain('addons.largerStorage requires plan: paid');
  });

  it('when storage is above the free envelope, then the API server rejects it and names the way to more', async () => {
    expect(await admission(ns.name, 'd', { storage: { size: '5Gi' } })).toContain(
      'storage.size above the free envelope (1Gi) needs plan: paid with addons.largerStorage',
    );
  });

  it('when the same add-ons come with plan paid, and idleAfter is 10s, then the API server accepts them', async () => {
    expect(
      await admission(ns.name, 'e', {
        plan: 'paid',
        keepAlive: true,
        hibernation: { idleAfter: '10s' },
        addons: { backups: { schedule: '0 3 * * *' }, largerStorage: { size: '5Gi' } },
      }),
    ).toBe('accepted');
  });

  it('when the examples are applied, then the API server accepts each CouchInstance in them', async () => {
    const examples = (
      await loadManifests(fileURLToPath(new URL('../../../examples', import.meta.url)))
    ).filter((object): object is CouchInstance => object.kind === 'CouchInstance');
    expect(examples.map((example) => example.spec.plan).sort()).toEqual(['free', 'paid']);
    for (const example of examples) {
      expect(await admission(ns.name, `example-${example.metadata.name}`, example.spec)).toBe('accepted');
    }
  });

  describe('by the operator, whose configured envelope is narrower than the CRD', () => {
    let operator: RunningOperator;
    beforeAll(async () => {
      operator = await startTestOperator({ namespace: ns.name, env: { SETTEE_FREE_STORAGE: '512Mi' } });
    });
    afterAll(() => operator?.stop());

    it('when an instance outside it is admitted, then it is reported as Failed with Degraded InvalidSpec and an Event, not a crash', async () => {
      await createInstance(ns.name, 'too-big', { storage: { size: '1Gi' } });
      const instance = await waitForInstance(ns.name, 'too-big', 'phase Failed', hasPhase('Failed'));
      const message =
        'storage.size above the free envelope (512Mi) needs plan: paid with addons.largerStorage';
      expect(conditionOf(instance, 'Degraded')).toMatchObject({
        status: 'True',
        reason: 'InvalidSpec',
        message,
      });
      expect(conditionOf(instance, 'Ready')).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
      expect(await waitForEventReasons(ns.name, 'too-big', ['InvalidSpec'])).toEqual([
        expect.objectContaining({ type: 'Warning', reason: 'InvalidSpec', message }),
      ]);
      // Meanwhile a valid instance in the same namespace is reconciled as usual.
      await createInstance(ns.name, 'fits', { storage: { size: '256Mi' } });
      await waitForInstance(ns.name, 'fits', 'phase Starting', hasPhase('Starting'));
    });
  });
});
