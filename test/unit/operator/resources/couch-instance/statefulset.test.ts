import { ANNOTATION_APPLIED_DIGEST, LABEL_APP_VERSION } from '../../../../../api/well-known.js';
import { resolveSpec } from '../../../../../operator/resources/couch-instance/resolved-spec.js';
import {
  buildStatefulSet,
  claimShapeOf,
  COUCHDB_USER_ID,
} from '../../../../../operator/resources/couch-instance/statefulset.js';
import { buildTestInstance, TEST_DEFAULTS } from './fixtures.js';
import { expectGolden } from './golden.js';

const build = (
  spec: Parameters<typeof buildTestInstance>[0],
  replicas: 0 | 1 = 1,
  existingClaim?: { size: string },
) => {
  const instance = buildTestInstance(spec);
  return buildStatefulSet({
    instance,
    spec: resolveSpec(instance.spec, TEST_DEFAULTS),
    replicas,
    configDigest: 'c0ffee',
    existingClaim,
  });
};

describe('buildStatefulSet', () => {
  it('when a free instance is built, then it matches the golden StatefulSet', () => {
    expectGolden('statefulset-free', build({ plan: 'free' }));
  });

  it('when a paid instance with add-ons is built, then it matches the golden StatefulSet', () => {
    expectGolden(
      'statefulset-paid',
      build({
        plan: 'paid',
        version: '3.3.3',
        image: 'registry.example.com/couchdb:3.3.3',
        keepAlive: true,
        storage: { storageClassName: 'fast-ssd' },
        addons: { largerStorage: { size: '20Gi' }, regionPinning: { region: 'eu-west-1' } },
        resources: { limits: { cpu: '2', memory: '4Gi' } },
      }),
    );
  });

  it('when the version changes, then the selector does not (it uses only labels that never change)', () => {
    const a = build({ version: '3.4.3' });
    const b = build({ version: '3.5.1' });
    expect(a.spec?.selector).toEqual(b.spec?.selector);
    expect(Object.keys(a.spec?.selector?.matchLabels ?? {})).not.toContain(LABEL_APP_VERSION);
    expect(a.spec?.template.metadata?.labels?.[LABEL_APP_VERSION]).toBe('3.4.3');
    expect(a.spec?.template.metadata?.labels).toMatchObject(
      a.spec?.selector?.matchLabels ?? { missing: 'labels' },
    );
  });

  it('when hibernated, then replicas is 0 and the claim template, so the volume, and the applied digest are unchanged', () => {
    const awake = build({}, 1);
    const asleep = build({}, 0);
    expect(asleep.spec?.replicas).toBe(0);
    expect(asleep.spec?.volumeClaimTemplates).toEqual(awake.spec?.volumeClaimTemplates);
    expect(asleep.spec?.persistentVolumeClaimRetentionPolicy).toEqual({
      whenScaled: 'Retain',
      whenDeleted: 'Delete',
    });
    // Replicas are compared apart: a wake or a hibernation writes them through the scale
    // subresource, which cannot change the annotation (OwnedObjects.apply).
    expect(asleep.metadata?.annotations?.[ANNOTATION_APPLIED_DIGEST]).toBe(
      awake.metadata?.annotations?.[ANNOTATION_APPLIED_DIGEST],
    );
  });

  it('when the StatefulSet exists with another claim size, then that immutable template is kept', () => {
    const grown = build({ plan: 'paid', addons: { largerStorage: { size: '20Gi' } } }, 1, { size: '1Gi' });
    expect(claimShapeOf(grown)).toEqual({ size: '1Gi' });
  });

  it('when the pod is built, then it runs as the non-root couchdb user with probes on /_up', () => {
    const pod = build({}).spec?.template.spec;
    const container = pod?.containers[0];
    expect(pod?.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: COUCHDB_USER_ID,
      fsGroup: COUCHDB_USER_ID,
    });
    expect(container?.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(container?.image).toBe('couchdb:3.5.1');
    expect(container?.readinessProbe?.httpGet?.path).toBe('/_up');
    expect(container?.startupProbe).toMatchObject({ httpGet: { path: '/_up' }, periodSeconds: 1 });
    expect(pod?.affinity).toBeUndefined();
  });
});
