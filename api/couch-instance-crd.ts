import {
  COUCH_INSTANCE_KIND,
  COUCH_INSTANCE_PLURAL,
  COUCH_INSTANCE_SHORT_NAME,
  COUCH_INSTANCE_SINGULAR,
} from './couch-instance.js';
import { buildSpecRules } from './couch-instance-rules.js';
import { COUCH_INSTANCE_SPEC_SCHEMA } from './couch-instance-schema.js';
import { COUCH_INSTANCE_STATUS_SCHEMA } from './couch-instance-status-schema.js';
import { AGE_COLUMN, buildCrd, type CrdManifest, type PrinterColumn } from './crd-manifest.js';
import { DEFAULT_FREE_ENVELOPE } from './free-envelope.js';

const PRINTER_COLUMNS: PrinterColumn[] = [
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
  AGE_COLUMN,
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
    description: 'Requests through the gateway on the UTC day of the last accrual (status.usage.today).',
    priority: 1,
  },
];

/**
 * The CouchInstance CustomResourceDefinition. crds/couchinstance.yaml is this object rendered
 * (`npx tsx local/tools/render-crds.ts`); `make lint` fails when the two differ.
 */
export function buildCouchInstanceCrd(): CrdManifest {
  const validations = buildSpecRules(DEFAULT_FREE_ENVELOPE).map(({ rule, message, fieldPath }) => ({
    rule,
    message,
    fieldPath,
  }));
  return buildCrd({
    kind: COUCH_INSTANCE_KIND,
    plural: COUCH_INSTANCE_PLURAL,
    singular: COUCH_INSTANCE_SINGULAR,
    shortName: COUCH_INSTANCE_SHORT_NAME,
    description:
      'A managed Apache CouchDB 3.x instance with generated admin credentials and an endpoint at the ' +
      'gateway, which hibernates (scales to zero, data kept) when idle and wakes on its next request.',
    printerColumns: PRINTER_COLUMNS,
    spec: { ...COUCH_INSTANCE_SPEC_SCHEMA, 'x-kubernetes-validations': validations },
    status: COUCH_INSTANCE_STATUS_SCHEMA,
  });
}
