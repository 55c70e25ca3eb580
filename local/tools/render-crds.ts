/**
 * Renders the three CRDs from their TypeScript (api/*-crd.ts, api/*-schema.ts) into crds/, the
 * chart's copy in charts/settee/crds/ and the field reference docs/crds.md, and removes a CRD file
 * in those folders that no CRD renders any more.
 *
 * Usage: npx tsx local/tools/render-crds.ts            write them
 *        npx tsx local/tools/render-crds.ts --check    change nothing; exit 1 naming each file that
 *                                                      differs from its source or has none (make lint)
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderCrdFiles } from '../../api/crd-files.js';
import { findDriftedFiles, findStaleFiles } from './crd-drift.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const rendered = renderCrdFiles();
const stale = await findStaleFiles(root, rendered);

if (process.argv.includes('--check')) {
  const drifted = await findDriftedFiles(root, rendered);
  for (const file of drifted)
    process.stderr.write(`render-crds: ${file} differs from its TypeScript source\n`);
  for (const file of stale) process.stderr.write(`render-crds: ${file} is rendered by no CRD\n`);
  if (drifted.length + stale.length > 0) {
    process.stderr.write('render-crds: run npx tsx local/tools/render-crds.ts\n');
    process.exit(1);
  }
} else {
  for (const file of rendered) {
    await fs.mkdir(path.dirname(path.join(root, file.path)), { recursive: true });
    await fs.writeFile(path.join(root, file.path), file.content);
  }
  for (const file of stale) await fs.rm(path.join(root, file));
  process.stderr.write(`render-crds: wrote ${rendered.map((f) => f.path).join(', ')}\n`);
  if (stale.length > 0) process.stderr.write(`render-crds: removed ${stale.join(', ')}\n`);
}
