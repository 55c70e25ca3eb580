import { ApiextensionsV1Api } from '@kubernetes/client-node';
import { DEFAULT_CRD_DIR } from '../../../local/control-plane.js';
import { loadManifests } from '../../../local/manifests.js';
import { testControlPlane } from '../../helpers/kube.js';

describe('installCrds', () => {
  it('when the CRDs are installed, then the stored schemas keep defaults, enums and CEL rules byte for byte', async () => {
    const api = testControlPlane().kubeConfig.makeApiClient(ApiextensionsV1Api);
    const expected = (await loadManifests(DEFAULT_CRD_DIR)).filter(
      (o) => o.kind === 'CustomResourceDefinition',
    );
    for (const crd of expected) {
      const want = (crd as unknown as { spec: { versions: Array<{ schema: unknown }> } }).spec.versions[0]
        ?.schema;
      // Read the raw JSON: the typed client would rename the very fields under test.
      const stored = await api.readCustomResourceDefinition({ name: crd.metadata?.name ?? '' });
      const raw = JSON.parse(JSON.stringify(await rawCrd(stored.metadata?.name ?? ''))) as {
        spec: { versions: Array<{ schema: unknown }> };
      };
      expect(raw.spec.versions[0]?.schema).toEqual(want);
    }
  });
});

async function rawCrd(name: string): Promise<unknown> {
  const { execFileSync } = await import('node:child_process');
  const plane = testControlPlane();
  const out = execFileSync(plane.kubectl, [
    '--kubeconfig',
    plane.kubeconfigPath,
    'get',
    'crd',
    name,
    '-o',
    'json',
  ]);
  return JSON.parse(out.toString());
}
