import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import type { CouchBackupSpec } from '../../../api/couch-backup.js';
import { buildCrds, renderCrdFiles } from '../../../api/crd-files.js';
import type { CrdManifest } from '../../../api/crd-manifest.js';
import { fieldsOf, type JsonSchema, type SameFields } from '../../../api/crd-schema.js';
import type { QueueBindingSpec } from '../../../api/queue-binding.js';
import { findDriftedFiles, findStaleFiles } from '../../../local/tools/crd-drift.js';

const ROOT = path.resolve('.');

function partsOf(crd: CrdManifest): { kind: string; version: JsonSchema; root: JsonSchema } {
  const spec = crd.spec as JsonSchema;
  const version = (spec.versions as JsonSchema[])[0] as JsonSchema;
  const root = (version.schema as JsonSchema).openAPIV3Schema as JsonSchema;
  return { kind: (spec.names as { kind: string }).kind, version, root };
}

function specAndStatusFields(root: JsonSchema): { path: string; schema: JsonSchema }[] {
  const properties = root.properties as Record<string, JsonSchema>;
  return (['spec', 'status'] as const).flatMap((part) => fieldsOf(properties[part] as JsonSchema, part));
}

describe('the CRDs rendered from TypeScript', () => {
  it("when crds/, the chart's copies and docs/crds.md are compared with the render, then none differs", async () => {
    // On failure: npx tsx local/tools/render-crds.ts (make crds).
    expect(await findDriftedFiles(ROOT, renderCrdFiles())).toEqual([]);
    expect(await findStaleFiles(ROOT, renderCrdFiles())).toEqual([]);
  });

  it("when a CRD file, the chart's copy and docs/crds.md each differ from the render, or a CRD file has no render, then the checks name each", async () => {
    const rendered = renderCrdFiles();
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-crd-drift-'));
    try {
      for (const file of rendered) {
        await fs.mkdir(path.dirname(path.join(root, file.path)), { recursive: true });
        await fs.writeFile(path.join(root, file.path), file.content);
      }
      expect(await findDriftedFiles(root, rendered)).toEqual([]);
      const edit = async (file: string, from: string, to: string) => {
        const text = await fs.readFile(path.join(root, file), 'utf8');
        expect(text).toContain(from);
        await fs.writeFile(path.join(root, file), text.replace(from, to));
      };
      await edit('crds/couchbackup.yaml', 'maxLength: 253', 'maxLength: 254');
      await edit('charts/settee/crds/queuebinding.yaml', 'default: 6379', 'default: 6380');
      await edit('docs/crds.md', 'Host name or IP address', 'Host name');
      expect(await findDriftedFiles(root, rendered)).toEqual([
        'crds/couchbackup.yaml',
        'charts/settee/crds/queuebinding.yaml',
        'docs/crds.md',
      ]);
      await fs.rm(path.join(root, 'crds/couchinstance.yaml'));
      expect(await findDriftedFiles(root, rendered)).toContain('crds/couchinstance.yaml');
      expect(await findStaleFiles(root, rendered)).toEqual([]);
      await fs.writeFile(
        path.join(root, 'charts/settee/crds/removed.yaml'),
        'kind: CustomResourceDefinition\n',
      );
      await fs.writeFile(path.join(root, 'charts/settee/crds/notes.txt'), 'not a CRD\n');
      expect(await findStaleFiles(root, rendered)).toEqual(['charts/settee/crds/removed.yaml']);
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  });

  it('when every spec and status field of each CRD is walked, then each has a description for kubectl explain, and docs/crds.md lists it', async () => {
    const doc = await fs.readFile(path.join(ROOT, 'docs/crds.md'), 'utf8');
    const crds = buildCrds().map(partsOf);
    expect(crds.map((c) => c.kind)).toEqual(['CouchInstance', 'CouchBackup', 'QueueBinding']);
    for (const { root } of crds) {
      const fields = specAndStatusFields(root);
      expect(fields.length).toBeGreaterThan(15);
      expect(
        fields.filter((f) => typeof f.schema.description !== 'string' || f.schema.description === ''),
      ).toEqual([]);
      for (const field of fields) expect(doc).toContain(`| \`${field.path}\` |`);
    }
  });

  it('when the files in crds/ are parsed, then they are the TypeScript objects, CEL rules, printer columns and defaults included', async () => {
    for (const crd of buildCrds()) {
      const { kind } = partsOf(crd);
      const file = path.join(ROOT, 'crds', `${kind.toLowerCase()}.yaml`);
      expect(parse(await fs.readFile(file, 'utf8'))).toEqual(crd);
    }
    const [, backup, binding] = buildCrds().map(partsOf);
    const backupSpec = (backup?.root.properties as Record<string, JsonSchema>).spec as JsonSchema;
    expect(backupSpec['x-kubernetes-validations']).toEqual([
      { rule: 'self == oldSelf', message: 'spec is immutable; create a new CouchBackup instead' },
    ]);
    const columns = binding?.version.additionalPrinterColumns as { name: string }[];
    expect(columns.map((c) => c.name)).toEqual(['Engine', 'Server', 'Version', 'Queue URL', 'Ready', 'Age']);
    const spec = (binding?.root.properties as Record<string, JsonSchema>).spec as JsonSchema;
    const connection = (spec.properties as Record<string, JsonSchema>).connection as JsonSchema;
    expect((connection.properties as Record<string, JsonSchema>).port).toMatchObject({ default: 6379 });
  });
});

// Checked by the type-check (make build), not at run time: the types come from the schemas, and a
// hand-written type that names other fields than its schema does not compile.
// @ts-expect-error a trigger outside the schema's enum is not a CouchBackupSpec
export const badTrigger: CouchBackupSpec = { instance: 'db', trigger: 'Nightly' };
// @ts-expect-error connection is required by the schema, so by the type
export const noConnection: QueueBindingSpec = { engine: 'redis' };
// @ts-expect-error a field the other type lacks
export const extraField: SameFields<{ a?: string; b?: number }, { a: string }> = true;
// @ts-expect-error the same field with another value type
export const otherType: SameFields<{ a: { b: string }[] }, { a?: { b?: number }[] }> = true;
export const sameFields: SameFields<{ a: { b: string }[] }, { a?: { b?: string }[] }> = true;
