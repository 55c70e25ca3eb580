import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { QSTASH_DURATION_PATTERN, parseQStashDuration } from '../../../api/qstash-duration.js';
import { DEFAULT_MAX_DELAY } from '../../../api/queue-binding.js';

const CRD_FILE = fileURLToPath(new URL('../../../crds/queuebinding.yaml', import.meta.url));

type Schema = { [key: string]: unknown };

function specSchema(): Schema {
  const crd = parse(fs.readFileSync(CRD_FILE, 'utf8')) as Schema;
  const version = ((crd.spec as Schema).versions as Schema[])[0]!;
  const root = (version.schema as Schema).openAPIV3Schema as Schema;
  return (root.properties as Record<string, Schema>).spec!;
}

describe('the QueueBinding CRD', () => {
  it("when spec.limits.maxDelay is read, then it has a description, the parser's pattern and the TypeScript default", () => {
    const limits = (specSchema().properties as Record<string, Schema>).limits!;
    expect(typeof limits.description).toBe('string');
    const maxDelay = (limits.properties as Record<string, Schema>).maxDelay!;
    expect(maxDelay.description).toMatch(/Upstash-Delay/);
    expect(maxDelay.pattern).toBe(QSTASH_DURATION_PATTERN);
    expect(maxDelay.default).toBe(DEFAULT_MAX_DELAY);
    expect(parseQStashDuration(DEFAULT_MAX_DELAY)).toBe(604_800_000);
  });
});
