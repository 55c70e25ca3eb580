import type { V1ConfigMap, V1Container, V1Pod, V1Secret, V1Volume } from '@kubernetes/client-node';
import { readContainerInputs } from '../../../../local/kubelet-stand-in/container-inputs.js';
import {
  MissingEngineInputError,
  type PodReferences,
} from '../../../../local/kubelet-stand-in/pod-references.js';

const ETC = '/opt/couchdb/etc';

function references(configMaps: V1ConfigMap[], secrets: V1Secret[] = []): PodReferences {
  return {
    configMap: ({ name }) => configMaps.find((c) => c.metadata?.name === name),
    secret: ({ name }) => secrets.find((s) => s.metadata?.name === name),
  };
}

function pod(container: Partial<V1Container>, volumes: V1Volume[] = []): V1Pod {
  return {
    metadata: { namespace: 'tenant', name: 'db-0' },
    spec: { containers: [{ name: 'couchdb', ...container }], volumes },
  };
}

const base64 = (text: string): string => Buffer.from(text).toString('base64');

describe('readContainerInputs', () => {
  it('when a mounted ConfigMap has data and binaryData, then both become files under etc', () => {
    const inputs = readContainerInputs(
      references([
        { metadata: { name: 'ini' }, data: { 'a.ini': '[a]\n' }, binaryData: { 'b.ini': base64('[b]\n') } },
      ]),
      pod({ volumeMounts: [{ name: 'config', mountPath: `${ETC}/local.d` }] }, [
        { name: 'config', configMap: { name: 'ini' } },
      ]),
    );
    expect(Object.fromEntries(inputs.etc)).toEqual({ 'local.d/a.ini': '[a]\n', 'local.d/b.ini': '[b]\n' });
  });

  it('when an optional volume source or env reference is missing, then it is left out as a kubelet does', () => {
    const inputs = readContainerInputs(
      references([{ metadata: { name: 'present' }, data: { 'x.ini': '[x]\n' } }]),
      pod(
        {
          volumeMounts: [{ name: 'config', mountPath: `${ETC}/local.d` }],
          env: [
            { name: 'PLAIN', value: 'v' },
            { name: 'GONE', valueFrom: { secretKeyRef: { name: 'absent', key: 'k', optional: true } } },
            {
              name: 'NO_KEY',
              valueFrom: { configMapKeyRef: { name: 'present', key: 'nope', optional: true } },
            },
          ],
        },
        [
          {
            name: 'config',
            projected: {
              sources: [
                {
                  configMap: {
                    name: 'present',
                    items: [{ key: 'missing.ini', path: 'm.ini' }],
                    optional: true,
                  },
                },
                { configMap: { name: 'present' } },
                { secret: { name: 'absent', optional: true } },
              ],
            },
          },
        ],
      ),
    );
    expect(Object.fromEntries(inputs.etc)).toEqual({ 'local.d/x.ini': '[x]\n' });
    expect(inputs.env).toEqual({ PLAIN: 'v' });
  });

  it('when a required reference is missing, then MissingEngineInputError names it', () => {
    const read = (container: Partial<V1Container>, volumes: V1Volume[] = []): unknown =>
      readContainerInputs(references([], [{ metadata: { name: 's' }, data: {} }]), pod(container, volumes));
    expect(() =>
      read({ volumeMounts: [{ name: 'config', mountPath: ETC }] }, [
        { name: 'config', configMap: { name: 'ini' } },
      ]),
    ).toThrow(new MissingEngineInputError('ConfigMap tenant/ini is not there (yet)'));
    expect(() =>
      read({ env: [{ name: 'P', valueFrom: { secretKeyRef: { name: 's', key: 'password' } } }] }),
    ).toThrow(new MissingEngineInputError('env P: Secret tenant/s has no key password'));
  });
});
