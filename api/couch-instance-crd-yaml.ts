import { stringify } from 'yaml';
import { buildCouchInstanceCrd } from './couch-instance-crd.js';

const HEADER =
  '# Generated from api/couch-instance-crd.ts by `npx tsx api/write-couch-instance-crd.ts`.\n' +
  '# Edit the TypeScript, then re-run; test/unit/api/couch-instance-crd.test.ts fails when they differ.\n';

export function renderCouchInstanceCrdYaml(): string {
  return HEADER + stringify(buildCouchInstanceCrd(), { lineWidth: 0, singleQuote: true });
}
