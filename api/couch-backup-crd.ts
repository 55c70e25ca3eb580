import {
  COUCH_BACKUP_KIND,
  COUCH_BACKUP_PLURAL,
  COUCH_BACKUP_SHORT_NAME,
  COUCH_BACKUP_SINGULAR,
} from './couch-backup.js';
import { COUCH_BACKUP_SPEC_SCHEMA, COUCH_BACKUP_STATUS_SCHEMA } from './couch-backup-schema.js';
import { buildCrd, type CrdManifest } from './crd-manifest.js';

/**
 * The CouchBackup CustomResourceDefinition. crds/couchbackup.yaml is this object rendered
 * (`npx tsx local/tools/render-crds.ts`); `make lint` fails when the two differ.
 */
export function buildCouchBackupCrd(): CrdManifest {
  return buildCrd({
    kind: COUCH_BACKUP_KIND,
    plural: COUCH_BACKUP_PLURAL,
    singular: COUCH_BACKUP_SINGULAR,
    shortName: COUCH_BACKUP_SHORT_NAME,
    description:
      'One backup of a CouchInstance to S3-compatible object storage: every database (_users and ' +
      '_replicator included) with all documents, design documents, attachments and _security, as one ' +
      'compressed archive plus a manifest. Created by the schedule of spec.addons.backups, before a changed ' +
      'instance hibernates, or by hand for an on-demand backup of a paid instance.',
    printerColumns: [
      {
        name: 'Instance',
        type: 'string',
        jsonPath: '.spec.instance',
        description: 'The CouchInstance backed up.',
      },
      {
        name: 'Trigger',
        type: 'string',
        jsonPath: '.spec.trigger',
        description: 'Manual, Scheduled or Hibernation.',
      },
      {
        name: 'Phase',
        type: 'string',
        jsonPath: '.status.phase',
        description: 'Pending, Running, Completed, Failed or Skipped.',
      },
      {
        name: 'Size',
        type: 'integer',
        jsonPath: '.status.size',
        description: 'Bytes of the compressed archive.',
      },
      {
        name: 'Databases',
        type: 'integer',
        jsonPath: '.status.databases',
        description: 'Databases in the backup.',
      },
      { name: 'Started', type: 'date', jsonPath: '.status.startedAt' },
      { name: 'Completed', type: 'date', jsonPath: '.status.completedAt' },
      { name: 'Message', type: 'string', priority: 1, jsonPath: '.status.message' },
    ],
    spec: COUCH_BACKUP_SPEC_SCHEMA,
    status: COUCH_BACKUP_STATUS_SCHEMA,
  });
}
