import type { KubernetesObject } from '@kubernetes/client-node';
import { SETTEE_GROUP, SETTEE_VERSION } from './contract.js';
import {
  COUCH_INSTANCE_CRD_NAME,
  COUCH_INSTANCE_KIND,
  COUCH_INSTANCE_PLURAL,
  COUCH_INSTANCE_SHORT_NAME,
  COUCH_INSTANCE_SINGULAR,
} from './couch-instance.js';
import { buildSpecRules } from './couch-instance-rules.js';
import {
  COUCH_INSTANCE_SPEC_SCHEMA,
  COUCH_INSTANCE_STATUS_SCHEMA,
  type JsonSchema,
} from './couch-instance-schema.js';
import { DEFAULT_FREE_ENVELOPE } from './free-envelope.js';

/**
 * A manifest in its wire form (`x-kubernetes-validations`, `default`), not client-node's typed
 * model, whose serializer knows these keys by other names.
 */
export type CrdManifest = KubernetesObject & { spec: JsonSchema };

/**
 * The CouchInstance CustomResourceDefinition. crds/couchinstance.yaml is this object rendered
 * (`npx tsx api/write-couch-instance-crd.ts`); a unit test fails when the two differ.
 */
export function buildCouchInstanceCrd(): CrdManifest {
  const validations = buildSpecRules(DEFAULT_FREE_ENVELOPE).map(({ rule, message, fieldPath }) => ({
    rule,
    message,
    fieldPath,
  }));
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: COUCH_INSTANCE_CRD_NAME },
    spec: {
      group: SETTEE_GROUP,
      scope: 'Namespaced',
      names: {
        kind: COUCH_INSTANCE_KIND,
        listKind: `${COUCH_INSTANCE_KIND}List`,
        plural: COUCH_INSTANCE_PLURAL,
        singular: COUCH_INSTANCE_SINGULAR,
        shortNames: [COUCH_INSTANCE_SHORT_NAME],
        categories: ['settee'],
      },
      versions: [
        {
          name: SETTEE_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            {
              name: 'Phase',
              type: 'string',
              jsonPath: '.status.phase',
              description: 'Where the instance is in its life.',
            },
            { name: 'Plan', type: 'string', jsonPath: '.spec.plan', description: 'free or paid.' },
            {
              name: 'Endpoint',
              type: 'string',
              jsonPath: '.status.endpoint',
              description: 'URL at the gateway.',
            },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
            {
              name: 'Size',
              type: 'integer',
              jsonPath: '.status.usage.storageBytes',
              description: "Bytes stored, as last measured (sum of the databases' file sizes).",
              priority: 1,
            },
            {
              name: 'DBs',
              type: 'integer',
              jsonPath: '.status.usage.databases',
              description: 'Databases, as last measured.',
              priority: 1,
            },
            {
              name: 'Awake-s',
              type: 'number',
              jsonPath: '.status.usage.awakeSeconds',
              description: 'Seconds CouchDB ran since the instance was created.',
              priority: 1,
            },
            {
              name: 'Wakes',
              type: 'integer',
              jsonPath: '.status.usage.wakes',
              description: 'Times the instance was woken from hibernation.',
              priority: 1,
            },
            {
              name: 'Requests-Today',
              type: 'integer',
              jsonPath: '.status.usage.today.requests',
              description:
                'Requests through the gateway on the UTC day of the last accrual (status.usage.today).',
              priority: 1,
            },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description:
                'A managed Apache CouchDB 3.x instance with generated admin credentials and an endpoint at the ' +
                'gateway, which hibernates (scales to zero, data kept) when idle and wakes on its next request.',
              required: ['spec'],
              properties: {
                apiVersion: {
                  type: 'string',
                  description:
                    'The versioned schema of this representation of an object (settee.dev/v1alpha1).',
                },
                kind: {
                  type: 'string',
                  description: 'The REST resource this object represents (CouchInstance).',
                },
                metadata: { type: 'object' },
                spec: { ...COUCH_INSTANCE_SPEC_SCHEMA, 'x-kubernetes-validations': validations },
                status: COUCH_INSTANCE_STATUS_SCHEMA,
              },
            },
          },
        },
      ],
    },
  };
}
