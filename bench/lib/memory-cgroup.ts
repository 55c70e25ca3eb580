/**
 * A child of this process's cgroup v1 memory cgroup with a memory limit, for a process that must see
 * the limit its pod has (writable as root; Linux). A child, so what runs in it is still accounted
 * where the benchmark is. Node sizes V8's heap, the young generation
 * included, from the limit of the cgroup it starts in, so a benchmark with no limit measures a
 * larger heap than the pod runs with (docs/data-path.md, the young generation).
 */
import fs from 'node:fs';
import path from 'node:path';

const MEMORY_ROOT = '/sys/fs/cgroup/memory';

export interface MemoryCgroup {
  /** Runs `spawn` with this process in the cgroup, so what it forks starts there; then moves back. */
  startInside<T>(spawn: () => T): T;
  remove(): void;
}

/** The host has no cgroup v1 memory hierarchy (cgroup v2 alone, or not Linux). */
export class MemoryCgroupUnavailableError extends Error {
  constructor() {
    super(`no cgroup v1 memory hierarchy at ${MEMORY_ROOT}: a memory limit needs one`);
    this.name = 'MemoryCgroupUnavailableError';
  }
}

export function createMemoryCgroup(name: string, limitBytes: number): MemoryCgroup {
  // Checked first: a recursive mkdir would have made the hierarchy's path as a plain folder.
  if (!fs.existsSync(path.join(MEMORY_ROOT, 'memory.limit_in_bytes')))
    throw new MemoryCgroupUnavailableError();
  const home = path.join(MEMORY_ROOT, ownMemoryCgroup());
  const dir = path.join(home, name);
  // Not recursive: the bench's own cgroup exists, and a name taken is an error, not a reuse.
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'memory.limit_in_bytes'), String(limitBytes));
  const join = (cgroup: string): void =>
    fs.writeFileSync(path.join(cgroup, 'cgroup.procs'), String(process.pid));
  return {
    startInside: (spawn) => {
      join(dir);
      try {
        return spawn();
      } finally {
        join(home);
      }
    },
    // Only once its processes have exited: an empty cgroup's directory is removed.
    remove: () => fs.rmdirSync(dir),
  };
}

/** This process's memory cgroup path, from /proc/self/cgroup (`<id>:memory:<path>`). */
function ownMemoryCgroup(): string {
  const line = fs
    .readFileSync('/proc/self/cgroup', 'utf8')
    .split('\n')
    .find((entry) => entry.split(':')[1]?.split(',').includes('memory'));
  return line?.split(':')[2] ?? '/';
}
