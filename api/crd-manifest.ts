import type { KubernetesObject } from '@kubernetes/client-node';
import { SETTEE_API_VERSION, SETTEE_GROUP, SETTEE_VERSION } from './contract.js';
import type { JsonSchema } from './crd-schema.js';

/**
 * A manifest in its wire form (`x-kubernetes-validations`, `default`), not client-node's typed
 * model, whose serializer knows these keys by other names.
 */
export type CrdManifest = KubernetesObject & { spec: JsonSchema };

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'date';
  jsonPath: string;
  description?: string;
  /** 1: shown only by `kubectl get -o wide`. */
  priority?: number;
}

export interface CrdDefinition {
  kind: string;
  plural: string;
  singular: string;
  shortName: string;
  /** What the resource is: the root of `kubectl explain <kind>`. */
  description: string;
  printerColumns: PrinterColumn[];
  spec: JsonSchema;
  status: JsonSchema;
}

/**
 * A namespaced settee.dev CustomResourceDefinition with one served and stored version, a status
 * subresource, and `spec` required: the shape all three of Settee's CRDs share.
 */
export function buildCrd(definition: CrdDefinition): CrdManifest {
  const { kind, plural, singular, shortName, description, printerColumns, spec, status } = definition;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${SETTEE_GROUP}` },
    spec: {
      group: SETTEE_GROUP,
      scope: 'Namespaced',
      names: {
        kind,
        listKind: `${kind}List`,
        plural,
        singular,
        shortNames: [shortName],
        categories: ['settee'],
      },
      versions: [
        {
          name: SETTEE_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: printerColumns,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description,
              required: ['spec'],
              properties: {
                apiVersion: {
                  type: 'string',
                  description: `The versioned schema of this representation of an object (${SETTEE_API_VERSION}).`,
                },
                kind: { type: 'string', description: `The REST resource this object represents (${kind}).` },
                metadata: { type: 'object' },
                spec,
                status,
              },
            },
          },
        },
      ],
    },
  };
}

/** The printer column every CRD ends its default columns with. */
export const AGE_COLUMN: PrinterColumn = {
  name: 'Age',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
};
