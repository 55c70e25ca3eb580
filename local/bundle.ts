import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, stop } from 'esbuild';
import { isProcessAlive } from './process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// Inside the repository, so that a bundle resolves its npm packages from its node_modules.
const BUILD_DIR = path.join(ROOT, '.settee', 'build');

/**
 * One TypeScript entry point of the repository and everything it imports as one plain JavaScript
 * file (npm packages stay external), named by its content: a process started from it is plain
 * `node`, which loads in about half the CPU time tsx's loader takes to load the modules one by one
 * (the platform's restarts after a crash are mostly that load). Written once per content; the
 * entry must not locate files through import.meta.url, which would name the bundle's folder.
 * The calling process pins the bundle it is given (pinBundle) for as long as it lives: it may
 * start processes from it at any time (a supervisor restarting a crashed gateway).
 */
export async function bundleEntry(entry: string): Promise<string> {
  building += 1;
  try {
    return await bundle(entry);
  } finally {
    // esbuild keeps a service process for the next build, with this process's environment: once
    // no build is left, it is stopped, so no child of ours outlives the start (the chaos soak
    // counts every process with its environment marker as leaked); a later build starts another.
    building -= 1;
    if (building === 0) await stop();
  }
}

let building = 0;

async function bundle(entry: string): Promise<string> {
  const absolute = path.resolve(ROOT, entry);
  // gateway/main.ts -> gateway-main.<hash>.mjs: every entry's bundles apart from another's.
  const name = path.relative(ROOT, absolute).replace(/\.ts$/, '').replaceAll(path.sep, '-');
  const result = await build({
    entryPoints: [absolute],
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    banner: { js: `// Built from ${path.relative(BUILD_DIR, absolute)}; do not edit.` },
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]?.contents;
  if (code === undefined) throw new Error(`esbuild wrote nothing for ${entry}`);
  const hash = crypto.createHash('sha256').update(code).digest('hex').slice(0, 16);
  const outfile = path.join(BUILD_DIR, `${name}.${hash}.mjs`);
  await fs.mkdir(BUILD_DIR, { recursive: true });
  // Pinned before it is looked for, so a prune that lists the pins after this keeps the file.
  await fs.writeFile(pinOf(outfile, process.pid), '');
  if (!(await fs.stat(outfile).catch(() => undefined))) {
    // Concurrent first starts (tests run platforms in parallel) each write; the rename is atomic.
    const temporary = `${outfile}.${process.pid}.tmp`;
    await fs.writeFile(temporary, code);
    await fs.rename(temporary, outfile);
  }
  // At every start, not only at a new bundle's: dead processes' pins of this one go too.
  await pruneBundles(name, outfile);
  return outfile;
}

/**
 * A bundle's pin by a process: an empty file `<bundle>.<pid>.pin` that keeps the bundle from
 * pruning while that process lives. A make run or a soak computes its bundles' paths once and
 * restarts a crashed gateway or operator from them, with no process started from the file
 * between the crash and the restart: only the pin says it is still needed.
 */
function pinOf(bundlePath: string, pid: number): string {
  return `${bundlePath}.${pid}.pin`;
}

/**
 * Removes the entry's other bundles, the temporary files of writers that died before their rename
 * and the pins of processes that are gone: every source change writes a new bundle, and the folder
 * would otherwise keep them all. A bundle pinned by a live process (another make run's) stays, as
 * does a live process's temporary file (its write in flight); this process's pins of the entry's
 * other bundles are released, as it now uses `kept`. The one race left, a start that pins an older
 * bundle after this lists the folder and finds it before its removal, needs the source edited
 * during a start.
 */
async function pruneBundles(name: string, kept: string): Promise<void> {
  const prefix = `${name}.`;
  const pattern = /^([0-9a-f]{16}\.mjs)(?:\.(\d+)\.(tmp|pin))?$/;
  const stale: string[] = [];
  const pinned = new Set<string>();
  for (const file of await fs.readdir(BUILD_DIR)) {
    const match = file.startsWith(prefix) ? pattern.exec(file.slice(prefix.length)) : null;
    const full = path.join(BUILD_DIR, file);
    if (match === null || full === kept) continue;
    const [, bundleFile, pid, suffix] = match;
    const bundlePath = path.join(BUILD_DIR, `${prefix}${bundleFile}`);
    const ownOlderPin = suffix === 'pin' && Number(pid) === process.pid && bundlePath !== kept;
    if (pid === undefined || ownOlderPin || !isProcessAlive(Number(pid))) stale.push(full);
    else if (suffix === 'pin') pinned.add(bundlePath);
  }
  // Another start may remove the same file at once: gone is what was wanted.
  await Promise.all(stale.filter((full) => !pinned.has(full)).map((full) => fs.rm(full, { force: true })));
}
