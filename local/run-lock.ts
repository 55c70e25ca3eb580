import fs from 'node:fs/promises';
import { canListenOn } from './ports.js';
import path from 'node:path';
import { isProcessAlive } from './process.js';

/** Another `make run` holds the state folder, or something else holds the gateway's port. */
export class LocalPlatformBusyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LocalPlatformBusyError';
  }
}

const LOCK_FILE = 'run.pid';

/**
 * Takes the state folder for this process: one `make run` per folder, since two would share one
 * kubeconfig, env file and set of volumes. A lock left by a process that is gone is taken over.
 * Resolves to the release function.
 */
export async function lockStateDir(stateDir: string): Promise<() => Promise<void>> {
  const file = path.join(stateDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await fs.writeFile(file, `${process.pid}\n`, { flag: 'wx' });
      return () => fs.rm(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = await lockHolder(stateDir);
    if (holder !== undefined)
      throw new LocalPlatformBusyError(
        `another \`make run\` (pid ${holder}) is running on ${stateDir}; stop it first (Ctrl-C in its terminal, or kill ${holder})`,
      );
    await fs.rm(file, { force: true });
  }
  throw new LocalPlatformBusyError(`could not take ${file}: another \`make run\` is starting on ${stateDir}`);
}

/** The pid of the live process that holds the folder, if any. */
export async function lockHolder(stateDir: string): Promise<number | undefined> {
  const text = await fs.readFile(path.join(stateDir, LOCK_FILE), 'utf8').catch(() => '');
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && isProcessAlive(pid) ? pid : undefined;
}

/**
 * Refuses to start when the gateway's port cannot be bound: the gateway would die with EADDRINUSE
 * after the rest of the platform had started, and the env file would point at someone else's.
 */
export async function assertPortFree(options: { port: number; what: string; hint: string }): Promise<void> {
  if (!(await canListenOn(options.port)))
    throw new LocalPlatformBusyError(
      `port ${options.port} on 127.0.0.1, where the ${options.what} listens, is taken (by another \`make run\`?); ${options.hint}`,
    );
}
