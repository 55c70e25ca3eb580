import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startProcess, type ManagedProcess } from '../../local/process.js';
import { ROOT } from './processes.js';

const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');

/** The two deployments the image builds, each started from its own entry point. */
export type PlatformComponent = 'gateway' | 'operator';

/** The operator and gateway compiled as the production image holds them (docker/Dockerfile). */
export interface CompiledPlatform {
  /** Starts dist/<component>/main.js the way the image does. */
  start(component: PlatformComponent, env: NodeJS.ProcessEnv): ManagedProcess;
  remove(): Promise<void>;
}

/**
 * Compiles the working tree with `tsc -p tsconfig.build.json` (the image's `npm run compile`) into
 * a temporary directory laid out like the image's /app: package.json (which makes dist/ ES modules),
 * node_modules (linked to the repository's) and dist/. A benchmark of the platform measures this
 * JavaScript, not the tsx loader's output that the tests run.
 */
export async function compilePlatform(): Promise<CompiledPlatform> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-bench-dist-'));
  try {
    await promisify(execFile)(
      process.execPath,
      [TSC, '-p', path.join(ROOT, 'tsconfig.build.json'), '--outDir', path.join(dir, 'dist')],
      { cwd: ROOT },
    );
    await fs.copyFile(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
    await fs.symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  } catch (err) {
    await fs.rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    // The image's command line and environment (CMD ["--enable-source-maps", ...], NODE_ENV).
    start: (component, env) =>
      startProcess({
        name: component,
        command: process.execPath,
        args: ['--enable-source-maps', path.join(dir, 'dist', component, 'main.js')],
        env: { ...env, NODE_ENV: 'production' },
        cwd: dir,
      }),
    remove: () => fs.rm(dir, { recursive: true, force: true }),
  };
}
