import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { QSTASH_DURATION_PATTERN, parseQStashDuration } from '../../../api/qstash-duration.js';
import { DEFAULT_MAX_DELAY } from '../../../api/queue-binding.js';
import { QUEUE_LIMIT_DEFAULTS, resolveQueueLimits } from '../../../api/queue-limits.js';

const CRD_FILE = fileURLToPath(new URL('../../../crds/queuebinding.yaml', import.meta.url));

type Schema = { [key: string]: unknown };

function rootSchema(part: 'spec' | 'status'): Schema {
  const crd = parse(fs.readFileSync(CRD_FILE, 'utf8')) as Schema;
  const version = ((crd.spec as Schema).versions as Schema[])[0]!;
  const root = (version.schema as Schema).openAPIV3Schema as Schema;
  return (root.properties as Record<string, Schema>)[part]!;
}
const specSchema = () => rootSchema('spec');

describe('the QueueBinding CRD', () => {
  it("when spec.limits.maxDelay is read, then it has a description and the parser's pattern, and no default of its own (the plan's)", () => {
    const limits = (specSchema().properties as Record<string, Schema>).limits!;
    expect(typeof limits.description).toBe('string');
    const maxDelay = (limits.properties as Record<string, Schema>).maxDelay!;
    expect(maxDelay.description).toMatch(/Upstash-Delay/);
    expect(maxDelay.pattern).toBe(QSTASH_DURATION_PATTERN);
    // No default in the schema: the API server would write it into every spec.limits, over spec.plan's figure.
    expect(maxDelay.default).toBeUndefined();
    expect(parseQStashDuration(DEFAULT_MAX_DELAY)).toBe(604_800_000);
  });

  it('when status.limits is read, then it documents every field the operator publishes, the same ones as spec.limits', () => {
    const propertiesOf = (schema: Schema) =>
      ((schema.properties as Record<string, Schema>).limits!.properties ?? {}) as Record<string, Schema>;
    const published = propertiesOf(rootSchema('status'));
    expect(Object.keys(published).sort()).toEqual(
      Object.keys(resolveQueueLimits(undefined, QUEUE_LIMIT_DEFAULTS)).sort(),
    );
    expect(Object.keys(published).sort()).toEqual(Object.keys(propertiesOf(specSchema())).sort());
    for (const field of Object.values(published)) expect(typeof field.description).toBe('string');
  });
});
