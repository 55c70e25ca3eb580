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
