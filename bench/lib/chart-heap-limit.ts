/**
 * The V8 heap a component gets in the pod the chart gives it. Node.js sizes V8's heap from the
 * memory it may use, the container's limit when there is one (uv_get_constrained_memory), so the
 * operator in its pod (operator.resources.limits.memory, 384Mi) runs with a far smaller old
 * generation than on a bench machine with gigabytes free, and V8 then lets the heap grow much less
 * past its live size between full collections (a growing factor of at most 1.3 at a 256 MB old
 * generation against up to 4 at 4 GB). A bench that runs the operator outside any container passes
 * the same limit explicitly, or it measures a heap the deployed operator never has.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import { parseQuantity } from '../../api/quantity.js';
import { ROOT } from './processes.js';

const MB = 1024 * 1024;

/**
 * V8's default old generation for `memoryBytes` on 64-bit Node.js without pointer compression
 * (Heap::OldGenerationSizeFromPhysicalMemory): a quarter of the memory, doubled for 8-byte
 * pointers, at least 256 MB. Checked on this machine's Node.js 20 in a cgroup limited to 384Mi:
 * heap_size_limit 259 MB (the 256 MB old generation and the young one).
 */
export function v8OldGenerationMb(memoryBytes: number): number {
  return Math.max(256, Math.floor(memoryBytes / MB / 4) * 2);
}

/** The chart's default memory limit of the operator's container, in bytes. */
export async function chartOperatorMemoryLimitBytes(): Promise<number> {
  const values = parse(await fs.readFile(path.join(ROOT, 'charts', 'settee', 'values.yaml'), 'utf8')) as {
    operator?: { resources?: { limits?: { memory?: string } } };
  };
  const limit = values.operator?.resources?.limits?.memory;
  if (limit === undefined)
    throw new Error('charts/settee/values.yaml sets no operator.resources.limits.memory');
  return parseQuantity(limit);
}
