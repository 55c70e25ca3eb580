import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';

const GOLDEN_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'golden');

/**
 * Compares `value`, as YAML, with golden/<name>.yaml. After an intended change, refresh the files
 * with SETTEE_UPDATE_GOLDEN=1 and review the diff.
 */
export function expectGolden(name: string, value: unknown): void {
  const file = path.join(GOLDEN_DIR, `${name}.yaml`);
  const text = stringify(value, { lineWidth: 0, singleQuote: true });
  if (process.env.SETTEE_UPDATE_GOLDEN === '1') fs.writeFileSync(file, text);
  expect(text).toBe(fs.readFileSync(file, 'utf8'));
}
