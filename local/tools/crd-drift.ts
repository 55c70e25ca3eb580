import fs from 'node:fs/promises';
import path from 'node:path';
import type { RenderedFile } from '../../api/crd-files.js';

/** The rendered files that are missing under `root` or whose content differs from the render. */
export async function findDriftedFiles(root: string, rendered: RenderedFile[]): Promise<string[]> {
  const drifted: string[] = [];
  for (const file of rendered) {
    const onDisk = await fs.readFile(path.join(root, file.path), 'utf8').catch(() => undefined);
    if (onDisk !== file.content) drifted.push(file.path);
  }
  return drifted;
}

/**
 * The YAML files in the rendered CRDs' folders (crds/, charts/settee/crds/) that no CRD renders any
 * more: Helm and `kubectl apply -f crds/` would still install a removed or renamed CRD from them.
 */
export async function findStaleFiles(root: string, rendered: RenderedFile[]): Promise<string[]> {
  const renderedPaths = new Set(rendered.map((file) => file.path));
  const folders = new Set(
    rendered.filter((file) => file.path.endsWith('.yaml')).map((f) => path.dirname(f.path)),
  );
  const stale: string[] = [];
  for (const folder of folders) {
    const names = await fs.readdir(path.join(root, folder)).catch(() => []);
    for (const name of names.sort()) {
      const file = path.posix.join(folder, name);
      if (name.endsWith('.yaml') && !renderedPaths.has(file)) stale.push(file);
    }
  }
  return stale;
}
