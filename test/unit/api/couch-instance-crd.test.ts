import { buildCouchInstanceCrd } from '../../../api/couch-instance-crd.js';
import { DEFAULT_FREE_ENVELOPE } from '../../../api/free-envelope.js';

type Schema = { [key: string]: unknown };
const version = () => (buildCouchInstanceCrd().spec.versions as Schema[])[0] as Schema;
const rootSchema = () => (version().schema as Schema).openAPIV3Schema as Schema;

describe('the CouchInstance CRD', () => {
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
