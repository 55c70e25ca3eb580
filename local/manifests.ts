import fs from 'node:fs/promises';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubernetesObject } from '@kubernetes/client-node';

/** Reads every YAML document of the `.yaml`/`.yml` files in `dir` (sorted by name), skipping empty ones. */
export async function loadManifests(dir: string): Promise<KubernetesObject[]> {
  const names = (await fs.readdir(dir).catch(() => [] as string[])).filter((n) => /\.ya?ml$/.test(n)).sort();
  const objects: KubernetesObject[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    for (const doc of parseAllDocuments(await fs.readFile(file, 'utf8'))) {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]?.message}`);
      const object = doc.toJS() as KubernetesObject | null;
      if (object) objects.push(object);
    }
  }
  return objects;
}
