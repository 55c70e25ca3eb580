import { stringify } from 'yaml';
import { buildCouchBackupCrd } from './couch-backup-crd.js';
import { buildCouchInstanceCrd } from './couch-instance-crd.js';
import type { CrdManifest } from './crd-manifest.js';
import { renderCrdReference } from './crd-reference-doc.js';
import { buildQueueBindingCrd } from './queue-binding-crd.js';

/**
 * Every file rendered from the CRDs' TypeScript: crds/ (what kubectl, the tests' control planes and
 * the chart install), the chart's byte-for-byte copy (Helm installs CRDs only from the chart's own
 * crds/ folder) and docs/crds.md. `npx tsx local/tools/render-crds.ts` writes them; its `--check`,
 * run by `make lint`, fails when one differs.
 */

const SOURCES = [
  { file: 'couchinstance.yaml', source: 'api/couch-instance-crd.ts', build: buildCouchInstanceCrd },
  { file: 'couchbackup.yaml', source: 'api/couch-backup-crd.ts', build: buildCouchBackupCrd },
  { file: 'queuebinding.yaml', source: 'api/queue-binding-crd.ts', build: buildQueueBindingCrd },
] as const;

export const CRD_DIR = 'crds';
export const CHART_CRD_DIR = 'charts/settee/crds';
export const CRD_REFERENCE_DOC = 'docs/crds.md';

export interface RenderedFile {
  /** Relative to the repository's root. */
  path: string;
  content: string;
}

export function buildCrds(): CrdManifest[] {
  return SOURCES.map(({ build }) => build());
}

export function renderCrdFiles(): RenderedFile[] {
  const yamls = SOURCES.map(({ file, source, build }) => ({
    file,
    content:
      `# Generated from ${source} by \`npx tsx local/tools/render-crds.ts\`.\n` +
      '# Edit the TypeScript, then re-run; `make lint` fails when they differ.\n' +
      stringify(build(), { lineWidth: 0, singleQuote: true }),
  }));
  return [
    ...yamls.map(({ file, content }) => ({ path: `${CRD_DIR}/${file}`, content })),
    ...yamls.map(({ file, content }) => ({ path: `${CHART_CRD_DIR}/${file}`, content })),
    { path: CRD_REFERENCE_DOC, content: renderCrdReference(buildCrds()) },
  ];
}
