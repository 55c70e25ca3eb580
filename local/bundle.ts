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
 * One TypeScript entry point of the repository and everything it imports as one ES module (npm
 * packages stay external), named by its content: a process started from it is plain `node`,
 * which loads in about half the CPU time tsx's loader takes to load the modules one by one.
 * Written once per content; the entry must not locate files through import.meta.url, which would
 * name the bundle's folder. The calling process pins the bundle it is given (pinOf) for as long as
 * it lives: it may start processes from it at any time.
 */
export function bundleEntry(entry: string): Promise<string> {
  return building(() => bundleOnce(entry, 'esm'));
}

/**
 * For the processes whose restart after a crash is a recovery the chaos soak times (the gateway,
 * the operator): the entry and everything it imports, npm packages included, as one CommonJS file,
 * and node's arguments that run it through local/bundle-runner.ts, which keeps V8's code cache
 * beside it. A restart then reads one file and compiles nothing: a gateway's start took 1.35 s of
 * CPU with its packages loaded from node_modules (@kubernetes/client-node alone is about 970
 * modules), 0.54 s bundled, 0.41 s with the code cache (docs/guarantees.md). The entry must use
 * neither top-level await nor import.meta (the build fails on esbuild's warning). Pinned as
 * bundleEntry's.
 */
export function bundleWithCodeCache(entry: string): Promise<string[]> {
  return building(() => Promise.all([bundleOnce(RUNNER, 'cjs'), bundleOnce(entry, 'cjs')]));
}

const bundlesInFlight = new Map<string, Promise<string>>();

/**
 * One build of an entry at a time in this process, shared by its callers: the local platform
 * bundles the gateway and the operator at once, and each needs the runner. Two writes of the same
 * bundle from one process share its temporary file's name, so the second rename found the file
 * gone (a fresh clone's `make chaos` failed at its start, 1 start in 4 reproduced).
 */
function bundleOnce(entry: string, format: 'esm' | 'cjs'): Promise<string> {
  const key = `${format}:${entry}`;
  let pending = bundlesInFlight.get(key);
  if (pending === undefined) {
    pending = bundle(entry, format).finally(() => bundlesInFlight.delete(key));
    bundlesInFlight.set(key, pending);
  }
  return pending;
}

let builds = 0;
const RUNNER = 'local/bundle-runner.ts';

async function building<T>(run: () => Promise<T>): Promise<T> {
  builds += 1;
  try {
    return await run();
  } finally {
    // esbuild keeps a service process for the next build, with this process's environment: once
    // no build is left, it is stopped, so no child of ours outlives the start (the chaos soak
    // counts every process with its environment marker as leaked); a later build starts another.
    builds -= 1;
    if (builds === 0) await stop();
  }
}

async function bundle(entry: string, format: 'esm' | 'cjs'): Promise<string> {
  const absolute = path.resolve(ROOT, entry);
  // gateway/main.ts -> gateway-main.<hash>.mjs: every entry's bundles apart from another's.
  const name = path.relative(ROOT, absolute).replace(/\.ts$/, '').replaceAll(path.sep, '-');
  const extension = format === 'esm' ? 'mjs' : 'cjs';
  const result = await build({
    entryPoints: [absolute],
    bundle: true,
    // CommonJS takes a code cache on Node 20 (vm.Script; an ES module does not), so its packages
    // are in it too: loaded from node_modules, they would be compiled at every start.
    ...(format === 'esm' ? { packages: 'external' as const } : {}),
    platform: 'node',
    format,
    target: 'node20',
    write: false,
    banner: { js: `// Built from ${path.relative(BUILD_DIR, absolute)}; do not edit.` },
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]?.contents;
  if (code === undefined) throw new Error(`esbuild wrote nothing for ${entry}`);
  // In CommonJS each warning is code that would run unlike its source (an empty import.meta).
  if (format === 'cjs' && result.warnings.length > 0)
    throw new Error(`esbuild warned on ${entry}: ${result.warnings.map((w) => w.text).join('; ')}`);
  const hash = crypto.createHash('sha256').update(code).digest('hex').slice(0, 16);
  const outfile = path.join(BUILD_DIR, `${name}.${hash}.${extension}`);
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
  await pruneBundles(name, outfile, extension);
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
 * Removes the entry's other bundles and their code caches, the temporary files of writers that
 * died before their rename and the pins of processes that are gone: every source change writes a
 * new bundle, and the folder would otherwise keep them all. A bundle pinned by a live process
 * (another make run's) stays with its cache, as does a live process's temporary file (its write in
 * flight); this process's pins of the entry's other bundles are released, as it now uses `kept`.
 * The one race left, a start that pins an older bundle after this lists the folder and finds it
 * before its removal, needs the source edited during a start. An entry's ES module and CommonJS
 * bundles are pruned apart.
 */
async function pruneBundles(name: string, kept: string, extension: string): Promise<void> {
  const prefix = `${name}.`;
  const pattern = new RegExp(`^([0-9a-f]{16}\\.${extension})(?:\\.v8cache)?(?:\\.(\\d+)\\.(tmp|pin))?$`);
  const stale: string[] = [];
  const older: { full: string; bundlePath: string }[] = [];
  const pinned = new Set<string>();
  for (const file of await fs.readdir(BUILD_DIR)) {
    const match = file.startsWith(prefix) ? pattern.exec(file.slice(prefix.length)) : null;
    if (match === null) continue;
    const [, bundleFile, pid, suffix] = match;
    const full = path.join(BUILD_DIR, file);
    const bundlePath = path.join(BUILD_DIR, `${prefix}${bundleFile}`);
    const ownOlderPin = suffix === 'pin' && Number(pid) === process.pid && bundlePath !== kept;
    if (pid === undefined) {
      if (bundlePath !== kept) older.push({ full, bundlePath });
    } else if (ownOlderPin || !isProcessAlive(Number(pid))) stale.push(full);
    else if (suffix === 'pin') pinned.add(bundlePath);
  }
  for (const { full, bundlePath } of older) if (!pinned.has(bundlePath)) stale.push(full);
  // Another start may remove the same file at once: gone is what was wanted.
  await Promise.all(stale.map((full) => fs.rm(full, { force: true })));
}
