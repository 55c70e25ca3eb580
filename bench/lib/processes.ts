import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleEntry } from '../../local/bundle.js';
import { startProcess, type ManagedProcess } from '../../local/process.js';
import { waitFor } from '../../local/wait.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/**
 * Starts a repository TypeScript file as one Node.js process (`node --import tsx`, not the tsx
 * CLI, which would put a wrapper process between us and the one whose memory is measured);
 * `node.flags` go to node, `node.onLine` hears each output line.
 */
export function startTsProcess(
  name: string,
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  node: { flags?: readonly string[]; onLine?: (line: string) => void } = {},
): ManagedProcess {
  return startProcess({
    name,
    command: process.execPath,
    args: [...(node.flags ?? []), '--import', TSX_LOADER, path.join(ROOT, file), ...args],
    env,
    cwd: ROOT,
    ...(node.onLine ? { onLine: node.onLine } : {}),
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
  env: NodeJS.ProcessEnv = process.env,
  node: { flags?: readonly string[]; onLine?: (line: string) => void } = {},
): Promise<ManagedProcess> {
  const script = await bundleEntry(file);
  return startProcess({
    name,
    command: process.execPath,
    args: [...(node.flags ?? []), script, ...args],
    env,
    cwd: ROOT,
    ...(node.onLine ? { onLine: node.onLine } : {}),
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
