import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ENGINE_DIR = path.dirname(fileURLToPath(import.meta.url));
const ENTRY = path.join(ENGINE_DIR, 'pouchdb-stand-in-server.ts');
// Inside the repository, so that the built file resolves packages from its node_modules.
const BUILD_DIR = path.resolve(ENGINE_DIR, '..', '..', '.settee', 'build');

let built: Promise<string> | undefined;

/**
 * The stand-in server as one plain JavaScript file. Every wake starts a new engine process, and
 * loading it through tsx cost about 200 ms of each cold start; esbuild turns the TypeScript into
 * JavaScript once per content of the sources (a few tens of ms), and every later start is plain
 * `node`. npm packages stay external, resolved from the repository's node_modules.
 */
export function standInServerScript(): Promise<string> {
  built ??= buildOnce();
  return built;
}

async function buildOnce(): Promise<string> {
  const sources = (await fs.readdir(ENGINE_DIR)).filter((name) => name.endsWith('.ts')).sort();
  const hash = crypto.createHash('sha256');
  for (const name of sources) hash.update(name).update(await fs.readFile(path.join(ENGINE_DIR, name)));
  const outfile = path.join(BUILD_DIR, `pouchdb-stand-in-server.${hash.digest('hex').slice(0, 16)}.mjs`);
  if (await fs.stat(outfile).catch(() => undefined)) return outfile;
  await fs.mkdir(BUILD_DIR, { recursive: true });
  const temporary = `${outfile}.${process.pid}.tmp`;
  await build({
    entryPoints: [ENTRY],
    outfile: temporary,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    banner: { js: `// Built from ${path.relative(BUILD_DIR, ENTRY)}; do not edit.` },
    logLevel: 'silent',
  });
  // Concurrent first starts (tests run engines in parallel) each build; the rename is atomic.
  await fs.rename(temporary, outfile);
  return outfile;
}
