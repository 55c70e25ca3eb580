/**
 * LOCAL PLATFORM ONLY: `node <this, bundled> <bundle.cjs>` runs a CommonJS bundle of local/bundle.ts
 * as `node <bundle.cjs>` would, but compiled with V8's code cache kept beside it
 * (`<bundle>.v8cache`): a restarted gateway or operator then skips parsing and compiling its
 * code, about a quarter of a bundled start's CPU (docs/guarantees.md). Node 22's
 * module.enableCompileCache does this for every module; the platform runs Node 20, which has only
 * vm.Script's cachedData. The cache is written by the first run that finds none (or one V8
 * rejects: another Node or V8 flags), once its start has compiled what a start needs: 10 s after
 * it, or at its exit if sooner.
 */
import fs from 'node:fs';
import { createRequire, wrap } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';

const WRITE_AFTER_MS = 10_000;

const file = path.resolve(process.argv[2] ?? '');
const cacheFile = `${file}.v8cache`;
// As `node <bundle>` leaves it: the bundle is the script, its arguments follow.
process.argv.splice(1, 2, file);
const cachedData = readIfPresent(cacheFile);
const script = new vm.Script(wrap(fs.readFileSync(file, 'utf8')), {
  filename: file,
  ...(cachedData ? { cachedData } : {}),
});
if (!cachedData || script.cachedDataRejected) {
  let written = false;
  const write = (): void => {
    if (written) return;
    written = true;
    // Another replica started from the same bundle may write at once: the rename is atomic.
    const temporary = `${cacheFile}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(temporary, script.createCachedData());
      fs.renameSync(temporary, cacheFile);
    } catch {
      // A cache is only a speed-up: the next start writes it.
      fs.rmSync(temporary, { force: true });
    }
  };
  setTimeout(write, WRITE_AFTER_MS).unref();
  process.once('exit', write);
}
// The bundle's own `module`: it sees what `node <bundle>` would hand it.
const bundleModule = { exports: {} };
(script.runInThisContext() as (...args: unknown[]) => void).call(
  bundleModule.exports,
  bundleModule.exports,
  createRequire(file),
  bundleModule,
  file,
  path.dirname(file),
);

function readIfPresent(name: string): Buffer | undefined {
  try {
    return fs.readFileSync(name);
  } catch {
    return undefined;
  }
}
