/**
 * Renders crds/couchinstance.yaml from buildCouchInstanceCrd(): `npx tsx api/write-couch-instance-crd.ts`.
 * The YAML is what kubectl, the Helm chart and the test control planes install.
 */
import fs from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { renderCouchInstanceCrdYaml } from './couch-instance-crd-yaml.js';

const target = fileURLToPath(new URL('../crds/couchinstance.yaml', import.meta.url));
await fs.writeFile(target, renderCouchInstanceCrdYaml());
console.log(`wrote ${target}`);
