import fs from 'node:fs/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { errorMessage } from '../observability/logger.js';
import { requestServiceAccountToken } from './tenant-access.js';

/** A ServiceAccount token file that stays valid while `make run` runs. */
export interface FreshTokenFile {
  file: string;
  stop(): void;
}

/** After a failed refresh, the next try comes this much later (the current token is still valid). */
const RETRY_MS = 60_000;

/**
 * Writes a ServiceAccount's bearer token (TokenRequest, `lifetimeSeconds` long) to `file` (mode
 * 0600), then writes a fresh one every half lifetime, so a `make run` that lasts days keeps the
 * demo user's sign-in token and the console's own identity valid, as the kubelet refreshes a
 * projected ServiceAccount token in a cluster. The file is replaced by a rename: a reader never
 * sees half a token.
 */
export async function keepTokenFileFresh(
  kubeConfig: KubeConfig,
  options: {
    namespace: string;
    serviceAccount: string;
    file: string;
    lifetimeSeconds?: number;
    /** Default: half the lifetime. */
    refreshEveryMs?: number;
    onError?: (message: string) => void;
  },
): Promise<FreshTokenFile> {
  const lifetimeSeconds = options.lifetimeSeconds ?? 24 * 3600;
  const refreshEveryMs = options.refreshEveryMs ?? (lifetimeSeconds * 1000) / 2;
  const write = async (): Promise<void> => {
    const token = await requestServiceAccountToken(
      kubeConfig,
      { namespace: options.namespace, name: options.serviceAccount },
      lifetimeSeconds,
    );
    const partial = `${options.file}.partial`;
    // No newline: client-node's tokenFile provider sends the file's bytes as they are.
    await fs.writeFile(partial, token, { mode: 0o600 });
    await fs.rename(partial, options.file);
  };
  await write();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const schedule = (delayMs: number): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      write().then(
        () => schedule(refreshEveryMs),
        (err: unknown) => {
          options.onError?.(
            `could not refresh the token of ServiceAccount ${options.namespace}/${options.serviceAccount}: ${errorMessage(err)}`,
          );
          schedule(Math.min(RETRY_MS, refreshEveryMs));
        },
      );
    }, delayMs);
    timer.unref();
  };
  schedule(refreshEveryMs);
  return {
    file: options.file,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
