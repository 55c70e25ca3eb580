/**
 * What the kubelet stand-in's suites run: a StatefulSet shaped as the operator writes it (the official
 * CouchDB image given its admin and the ConfigMap's ini), its names, and the admin it names.
 */
import type { V1Container, V1StatefulSet, V1Volume } from '@kubernetes/client-node';
import { adminSecretName, LABEL_INSTANCE } from '../../../api/contract.js';

export const NAME = 'standin';
export const UUID = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
export const admin = { username: 'admin', password: 'stand-in-secret' };

/** The container the tests' pods run: the official image given its admin and the ConfigMap's ini. */
export function couchContainer(probes: Partial<V1Container> = {}): V1Container {
  return {
    name: 'couchdb',
    image: 'couchdb:3.5.1',
    ports: [{ name: 'http', containerPort: 5984, protocol: 'TCP' }],
    // The official image's way to name its admin; Apache CouchDB hashes the password itself.
    env: ['username', 'password'].map((key) => ({
      name: key === 'username' ? 'COUCHDB_USER' : 'COUCHDB_PASSWORD',
      valueFrom: { secretKeyRef: { name: adminSecretName(NAME), key } },
    })),
    volumeMounts: [
      { name: 'data', mountPath: '/opt/couchdb/data' },
      { name: 'config', mountPath: '/opt/couchdb/etc/local.d' },
    ],
    ...probes,
  };
}

export const CONFIG_VOLUME: V1Volume = {
  name: 'config',
  projected: { sources: [{ configMap: { name: `${NAME}-config` } }] },
};

export function statefulSet(replicas: number): V1StatefulSet {
  const labels = { [LABEL_INSTANCE]: NAME };
  return {
    metadata: { name: NAME, labels },
    spec: {
      replicas,
      serviceName: `${NAME}-headless`,
      persistentVolumeClaimRetentionPolicy: { whenScaled: 'Retain', whenDeleted: 'Delete' },
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [couchContainer()],
          volumes: [CONFIG_VOLUME],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
      ],
    },
  };
}
