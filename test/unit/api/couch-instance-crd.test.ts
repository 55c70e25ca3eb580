import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildCouchInstanceCrd } from '../../../api/couch-instance-crd.js';
import { renderCouchInstanceCrdYaml } from '../../../api/couch-instance-crd-yaml.js';
import { DEFAULT_FREE_ENVELOPE } from '../../../api/free-envelope.js';

const CRD_FILE = fileURLToPath(new URL('../../../crds/couchinstance.yaml', import.meta.url));

type Schema = { [key: string]: unknown };
const version = () => (buildCouchInstanceCrd().spec.versions as Schema[])[0] as Schema;
const rootSchema = () => (version().schema as Schema).openAPIV3Schema as Schema;

/** Every property below `schema`, with its path, so no field can slip through without a description. */
function fieldsOf(schema: Schema, path: string): { path: string; schema: Schema }[] {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const items = schema.items as Schema | undefined;
  return [
    ...Object.entries(properties).flatMap(([name, child]) => [
      { path: `${path}.${name}`, schema: child },
      ...fieldsOf(child, `${path}.${name}`),
    ]),
    ...(items ? fieldsOf(items, `${path}[]`) : []),
  ];
}

describe('the CouchInstance CRD', () => {
  it('when crds/couchinstance.yaml is compared with the TypeScript definition, then they are identical', () => {
    // Regenerate with: npx tsx api/write-couch-instance-crd.ts
    expect(fs.readFileSync(CRD_FILE, 'utf8')).toBe(renderCouchInstanceCrdYaml());
  });

  it('when the names are read, then it is the namespaced settee.dev couchinstances with short name couch', () => {
    const crd = buildCouchInstanceCrd();
    expect(crd.metadata?.name).toBe('couchinstances.settee.dev');
    expect(crd.spec).toMatchObject({
      group: 'settee.dev',
      scope: 'Namespaced',
      names: { kind: 'CouchInstance', plural: 'couchinstances', shortNames: ['couch'] },
    });
    expect(version()).toMatchObject({
      name: 'v1alpha1',
      served: true,
      storage: true,
      subresources: { status: {} },
    });
  });

  it('when the printer columns are listed, then they are Phase, Plan, Endpoint and Age, and with -o wide the usage', () => {
    const columns = version().additionalPrinterColumns as {
      name: string;
      jsonPath: string;
      priority?: number;
    }[];
    expect(columns.map((c) => [c.name, c.jsonPath, c.priority ?? 0])).toEqual([
      ['Phase', '.status.phase', 0],
      ['Plan', '.spec.plan', 0],
      ['Endpoint', '.status.endpoint', 0],
      ['Age', '.metadata.creationTimestamp', 0],
      ['Size', '.status.usage.storageBytes', 1],
      ['DBs', '.status.usage.databases', 1],
      ['Awake-s', '.status.usage.awakeSeconds', 1],
      ['Wakes', '.status.usage.wakes', 1],
      ['Requests-Today', '.status.usage.today.requests', 1],
    ]);
  });

  it('when every spec and status field is walked, then each one has a description for kubectl explain', () => {
    const root = rootSchema();
    const properties = root.properties as Record<string, Schema>;
    const fields = [
      ...fieldsOf(properties.spec as Schema, 'spec'),
      ...fieldsOf(properties.status as Schema, 'status'),
    ];
    expect(fields.length).toBeGreaterThan(30);
    expect(
      fields
        .filter((f) => typeof f.schema.description !== 'string' || f.schema.description === '')
        .map((f) => f.path),
    ).toEqual([]);
  });

  it('when the validation rules are read, then each has a message and the storage rule names the free envelope', () => {
    const spec = (rootSchema().properties as Record<string, Schema>).spec as Schema;
    const rules = spec['x-kubernetes-validations'] as { rule: string; message: string }[];
    expect(rules.every((r) => r.rule.length > 0 && r.message.length > 0)).toBe(true);
    expect(rules.map((r) => r.message)).toContain('keepAlive requires plan: paid');
    const storage = rules.find((r) => r.rule.includes('self.storage.size'));
    expect(storage?.rule).toContain(`quantity('${DEFAULT_FREE_ENVELOPE.storage}')`);
  });

  it('when defaults are read, then plan is free, keepAlive false and idleAfter 15m', () => {
    const spec = (rootSchema().properties as Record<string, Schema>).spec as Schema;
    const props = spec.properties as Record<string, Schema>;
    expect(props.plan?.default).toBe('free');
    expect(props.keepAlive?.default).toBe(false);
    expect(((props.hibernation?.properties as Record<string, Schema>).idleAfter as Schema).default).toBe(
      '15m',
    );
  });
});
