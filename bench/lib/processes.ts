import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../../local/bundle.js';
import { startProcess, type ManagedProcess } from '../../local/process.js';
import { waitFor } from '../../local/wait.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** How a started file runs: its environment (default this process's), node's flags, an output line reader. */
export interface TsProcessOptions {
  env?: NodeJS.ProcessEnv;
  flags?: readonly string[];
  onLine?: (line: string) => void;
}

/**
 * Starts a repository TypeScript file as one Node.js process (`node --import tsx`, not the tsx
 * CLI, which would put a wrapper process between us and the one whose memory is measured).
 */
export function startTsProcess(
  name: string,
  file: string,
  args: string[],
  { env = process.env, flags = [], onLine }: TsProcessOptions = {},
): ManagedProcess {
  return startProcess({
    name,
    command: process.execPath,
    args: [...flags, '--import', TSX_LOADER, path.join(ROOT, file), ...args],
    env,
    cwd: ROOT,
    ...(onLine ? { onLine } : {}),
  });
}

/**
 * Starts a repository TypeScript file as its esbuild bundle (local/bundle.ts) with plain node, as
 * the local platform runs the gateway: for a process whose CPU a benchmark sets beside a bundled
 * gateway's (the queue's floor), so neither pays tsx's loader output (its `__name` wrappers).
 */
export async function startBundledProcess(
  name: string,
  file: string,
  args: string[],
  { env = process.env, flags = [], onLine }: TsProcessOptions = {},
): Promise<ManagedProcess> {
  const script = await bundleEntry(file);
  return startProcess({
    name,
    command: process.execPath,
    args: [...flags, script, ...args],
    env,
    cwd: ROOT,
    ...(onLine ? { onLine } : {}),
  });
}

/** Waits until `url` answers with `status` (default 200). */
export async function waitForHttp(
  url: string,
  what: string,
  status = 200,
  abort?: Promise<unknown>,
): Promise<void> {
  await waitFor(
    what,
    async () => {
      const response = await fetch(url);
      await response.body?.cancel();
      return response.status === status ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 50, ...(abort ? { abort } : {}) },
  );
}
