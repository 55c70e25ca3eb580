import type { V1Probe, V1StatefulSet } from '@kubernetes/client-node';
import { COUCHDB_PORT } from '../../../api/contract.js';
import type { CouchInstance } from '../../../api/couch-instance.js';
import { ANNOTATION_CONFIG_DIGEST } from '../../../api/well-known.js';
import { AUTH_INI_KEY } from './admin-secret.js';
import { withAppliedDigest } from '../applied-digest.js';
import { COUCHDB_INI_KEY } from './couchdb-config.js';
import { buildOwnedMetadata } from './owned-metadata.js';
import { buildPodLabels, buildSelectorLabels } from './labels.js';
import { CONFIG_VOLUME, couchInstanceNames, DATA_VOLUME } from './names.js';
import type { ResolvedCouchInstanceSpec } from './resolved-spec.js';
import { HTTP_PORT_NAME } from './services.js';

/** The uid and gid the official image's `couchdb` user has. */
export const COUCHDB_USER_ID = 5984;
export const COUCHDB_CONTAINER = 'couchdb';
export const REGION_LABEL = 'topology.kubernetes.io/region';
const DATA_PATH = '/opt/couchdb/data';
const LOCAL_INI_DIR = '/opt/couchdb/etc/local.d';

export interface VolumeClaimShape {
  size: string;
  storageClassName?: string;
}

export interface StatefulSetInput {
  instance: CouchInstance;
  spec: ResolvedCouchInstanceSpec;
  /** 1 while awake, 0 while hibernated: the operator is the only writer of this field. */
  replicas: 0 | 1;
  /** Digest of the CouchDB configuration; a change rolls the pod so it reads the new ini. */
  configDigest: string;
  /**
   * The claim template of the StatefulSet as it exists. Claim templates are immutable, so once the
   * StatefulSet exists its template is kept and a larger size is applied to the PVC instead.
   */
  existingClaim?: VolumeClaimShape;
}

/** `/_up` answers without credentials once CouchDB serves requests. */
const upProbe = (timing: Omit<V1Probe, 'httpGet'>): V1Probe => ({
  httpGet: { path: '/_up', port: HTTP_PORT_NAME, scheme: 'HTTP' },
  ...timing,
});

/**
 * The CouchDB container's probes. A cold start is on a waiting request's path: the startup probe
 * runs every second from the container's start, with a budget (120 s) far above Apache CouchDB's
 * boot (under 1 s quiet, 9-17 s for a first start on a loaded 2-core machine).
 */
export const COUCHDB_PROBES: Readonly<Record<'startupProbe' | 'readinessProbe' | 'livenessProbe', V1Probe>> =
  {
    startupProbe: upProbe({ periodSeconds: 1, timeoutSeconds: 1, failureThreshold: 120 }),
    readinessProbe: upProbe({ periodSeconds: 5, timeoutSeconds: 2, failureThreshold: 2 }),
    livenessProbe: upProbe({ periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 6 }),
  };

export function buildStatefulSet(input: StatefulSetInput): V1StatefulSet {
  const { instance, spec, replicas, configDigest } = input;
  const name = instance.metadata.name ?? '';
  const names = couchInstanceNames(name);
  const claim = input.existingClaim ?? spec.storage;
  return withAppliedDigest<V1StatefulSet>({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: buildOwnedMetadata(instance, names.statefulSet),
    spec: {
      replicas,
      serviceName: names.headlessService,
      selector: { matchLabels: buildSelectorLabels(name) },
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate' },
      revisionHistoryLimit: 2,
      // Scaling to zero keeps the volume (that is what hibernation is); deleting the instance
      // deletes it with the StatefulSet (docs/couchinstance.md).
      persistentVolumeClaimRetentionPolicy: { whenScaled: 'Retain', whenDeleted: 'Delete' },
      template: {
        metadata: {
          labels: buildPodLabels(name, spec.version),
          annotations: { [ANNOTATION_CONFIG_DIGEST]: configDigest },
        },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: 30,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: COUCHDB_USER_ID,
            runAsGroup: COUCHDB_USER_ID,
            fsGroup: COUCHDB_USER_ID,
            fsGroupChangePolicy: 'OnRootMismatch',
            seccompProfile: { type: 'RuntimeDefault' },
          },
          ...(spec.region
            ? {
                affinity: {
                  nodeAffinity: {
                    requiredDuringSchedulingIgnoredDuringExecution: {
                      nodeSelectorTerms: [
                        { matchExpressions: [{ key: REGION_LABEL, operator: 'In', values: [spec.region] }] },
                      ],
                    },
                  },
                },
              }
            : {}),
          containers: [
            {
              name: COUCHDB_CONTAINER,
              image: spec.image,
              imagePullPolicy: 'IfNotPresent',
              ports: [{ name: HTTP_PORT_NAME, containerPort: COUCHDB_PORT, protocol: 'TCP' }],
              resources: { requests: { ...spec.resources.requests }, limits: { ...spec.resources.limits } },
              volumeMounts: [
                { name: DATA_VOLUME, mountPath: DATA_PATH },
                {
                  name: CONFIG_VOLUME,
                  mountPath: `${LOCAL_INI_DIR}/10-${COUCHDB_INI_KEY}`,
                  subPath: COUCHDB_INI_KEY,
                  readOnly: true,
                },
                {
                  name: CONFIG_VOLUME,
                  mountPath: `${LOCAL_INI_DIR}/11-${AUTH_INI_KEY}`,
                  subPath: AUTH_INI_KEY,
                  readOnly: true,
                },
              ],
              // A copy: a caller may change the object it is given.
              ...structuredClone(COUCHDB_PROBES),
              securityContext: {
                allowPrivilegeEscalation: false,
                capabilities: { drop: ['ALL'] },
                runAsNonRoot: true,
              },
            },
          ],
          volumes: [
            {
              name: CONFIG_VOLUME,
              projected: {
                defaultMode: 0o440,
                sources: [
                  {
                    configMap: {
                      name: names.configMap,
                      items: [{ key: COUCHDB_INI_KEY, path: COUCHDB_INI_KEY }],
                    },
                  },
                  { secret: { name: names.adminSecret, items: [{ key: AUTH_INI_KEY, path: AUTH_INI_KEY }] } },
                ],
              },
            },
          ],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: DATA_VOLUME, labels: buildSelectorLabels(name) },
          spec: {
            accessModes: ['ReadWriteOnce'],
            resources: { requests: { storage: claim.size } },
            ...(claim.storageClassName ? { storageClassName: claim.storageClassName } : {}),
          },
        },
      ],
    },
  });
}

/** The claim template of a StatefulSet as stored, to keep it unchanged on later applies. */
export function claimShapeOf(statefulSet: V1StatefulSet | undefined): VolumeClaimShape | undefined {
  const template = statefulSet?.spec?.volumeClaimTemplates?.find((t) => t.metadata?.name === DATA_VOLUME);
  const size = template?.spec?.resources?.requests?.storage;
  if (size === undefined) return undefined;
  const storageClassName = template?.spec?.storageClassName;
  return { size: String(size), ...(storageClassName ? { storageClassName } : {}) };
}
