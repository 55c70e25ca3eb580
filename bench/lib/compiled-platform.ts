import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startProcess, type ManagedProcess } from '../../local/process.js';
import { readDockerfile, type ImageStage } from '../../test/helpers/image-layout.js';
import { ROOT } from './processes.js';

const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');

/** The deployments the images build; each is a stage of docker/Dockerfile of that name. */
export type PlatformComponent = 'gateway' | 'operator' | 'console';

/** The operator and gateway compiled as the production images hold them (docker/Dockerfile). */
export interface CompiledPlatform {
  /**
   * Starts a component with its image stage's CMD (node's arguments) and ENV, then `env`;
   * `nodeArgs` go before the CMD (e.g. --cpu-prof, which NODE_OPTIONS does not take).
   */
  start(component: PlatformComponent, env: NodeJS.ProcessEnv, nodeArgs?: readonly string[]): ManagedProcess;
  remove(): Promise<void>;
}

/**
 * Compiles the working tree (or another checkout at `root`, for a build side by side) with `tsc -p tsconfig.build.json` (the image's `npm run compile`) into
 * a temporary directory laid out like the image's /app: package.json (which makes dist/ ES modules),
 * node_modules (linked to the repository's) and dist/. A benchmark of the platform measures this
 * JavaScript, started with the node flags the image gives it, not the tsx loader's output that
 * the tests run.
 */
export async function compilePlatform(root = ROOT): Promise<CompiledPlatform> {
  const stages = await readDockerfile(path.join(root, 'docker', 'Dockerfile'));
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-bench-dist-'));
  try {
    await promisify(execFile)(
      process.execPath,
      [TSC, '-p', path.join(root, 'tsconfig.build.json'), '--outDir', path.join(dir, 'dist')],
      { cwd: root },
    );
    await fs.copyFile(path.join(root, 'package.json'), path.join(dir, 'package.json'));
    await fs.symlink(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    // The console's page, where its image has it (built by `npm run build:web`).
    await fs.mkdir(path.join(dir, 'dist', 'console', 'web'), { recursive: true });
    await fs.symlink(
      path.join(root, 'console', 'web', 'dist'),
      path.join(dir, 'dist', 'console', 'web', 'dist'),
      'dir',
    );
  } catch (err) {
    await fs.rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    start: (component, env, nodeArgs = []) => {
      const stage = stageOf(stages, component);
      return startProcess({
        name: component,
        command: process.execPath,
        // The CMD's paths are relative to the image's WORKDIR, which `dir` stands for.
        args: [...nodeArgs, ...stage.cmd],
        env: { ...env, ...stage.env },
        cwd: dir,
      });
    },
    remove: () => fs.rm(dir, { recursive: true, force: true }),
  };
}

function stageOf(stages: ReadonlyMap<string, ImageStage>, component: PlatformComponent): ImageStage {
  const stage = stages.get(component);
  if (stage === undefined) throw new Error(`docker/Dockerfile has no stage named ${component}`);
  return stage;
}
