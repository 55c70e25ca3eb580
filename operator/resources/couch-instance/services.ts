import type { V1Service } from '@kubernetes/client-node';
import { COUCHDB_PORT } from '../../../api/contract.js';
import type { CouchInstance } from '../../../api/couch-instance.js';
import { withAppliedDigest } from '../applied-digest.js';
import { buildSelectorLabels } from './labels.js';
import { couchInstanceNames } from './names.js';
import { buildOwnedMetadata } from './owned-metadata.js';

export const HTTP_PORT_NAME = 'http';

function buildService(instance: CouchInstance, name: string, spec: V1Service['spec']): V1Service {
  const instanceName = instance.metadata.name ?? '';
  return withAppliedDigest<V1Service>({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: buildOwnedMetadata(instance, name),
    spec: {
      selector: buildSelectorLabels(instanceName),
      ports: [{ name: HTTP_PORT_NAME, port: COUCHDB_PORT, targetPort: HTTP_PORT_NAME, protocol: 'TCP' }],
      ...spec,
    },
  });
}

/**
 * The StatefulSet's governing Service. It publishes not-ready addresses so that a waking pod's DNS
 * name resolves before its readiness probe passes, matching the gateway, which reads pods and
 * probes /_up itself rather than waiting for the kubelet (contract.ts).
 */
export function buildHeadlessService(instance: CouchInstance): V1Service {
  return buildService(instance, couchInstanceNames(instance.metadata.name ?? '').headlessService, {
    clusterIP: 'None',
    publishNotReadyAddresses: true,
  });
}

/** A stable in-cluster address for CouchDB on 5984 (ready pods only). */
export function buildClientService(instance: CouchInstance): V1Service {
  return buildService(instance, couchInstanceNames(instance.metadata.name ?? '').clientService, {
    type: 'ClusterIP',
  });
}
