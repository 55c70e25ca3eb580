import { AGE_COLUMN, buildCrd, type CrdManifest } from './crd-manifest.js';
import {
  QUEUE_BINDING_KIND,
  QUEUE_BINDING_PLURAL,
  QUEUE_BINDING_SHORT_NAME,
  QUEUE_BINDING_SINGULAR,
} from './queue-binding.js';
import { QUEUE_BINDING_SPEC_SCHEMA, QUEUE_BINDING_STATUS_SCHEMA } from './queue-binding-schema.js';

/**
 * The QueueBinding CustomResourceDefinition. crds/queuebinding.yaml is this object rendered
 * (`npx tsx local/tools/render-crds.ts`); `make lint` fails when the two differ.
 */
export function buildQueueBindingCrd(): CrdManifest {
  return buildCrd({
    kind: QUEUE_BINDING_KIND,
    plural: QUEUE_BINDING_PLURAL,
    singular: QUEUE_BINDING_SINGULAR,
    shortName: QUEUE_BINDING_SHORT_NAME,
    description:
      'QueueBinding gives a Valkey or Redis database a webhook queue that speaks the Upstash QStash HTTP ' +
      'API. The operator writes the four VQUEUE_* values to the Secret named in status.envSecret; the ' +
      'gateway serves the queue at status.queueUrl and keeps its messages in that same database, under a ' +
      'reserved key prefix.',
    printerColumns: [
      { name: 'Engine', type: 'string', jsonPath: '.spec.engine' },
      { name: 'Server', type: 'string', jsonPath: '.status.server.engine' },
      { name: 'Version', type: 'string', jsonPath: '.status.server.version' },
      { name: 'Queue URL', type: 'string', jsonPath: '.status.queueUrl' },
      { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
      AGE_COLUMN,
    ],
    spec: QUEUE_BINDING_SPEC_SCHEMA,
    status: QUEUE_BINDING_STATUS_SCHEMA,
  });
}
