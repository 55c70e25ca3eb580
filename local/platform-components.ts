import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchOnFreePort, type Launched } from './launch.js';
import { startProcess, type ManagedProcess } from './process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** One of the platform's own processes, run from its TypeScript entry point (or its bundle). */
export interface Component {
  name: string;
  entry: string;
  env: NodeJS.ProcessEnv;
}

export const gatewayComponent = (env: NodeJS.ProcessEnv, port: number, name = 'gateway'): Component => ({
  name,
  entry: 'gateway/main.ts',
  env: { ...env, SETTEE_GATEWAY_PORT: String(port) },
});

export const consoleComponent = (env: NodeJS.ProcessEnv, port: number): Component => ({
  name: 'console',
  entry: 'console/main.ts',
  env: { ...env, SETTEE_CONSOLE_PORT: String(port) },
});

/** Starts the gateway on `port` (checked free beforehand) or any free one, and waits for /healthz. */
export function startGateway(
  env: NodeJS.ProcessEnv,
  run: RunOptions,
  port: number | undefined,
): Promise<Launched> {
  return launchOnFreePort({
    what: 'gateway /healthz',
    port,
    start: (p) => startComponent(gatewayComponent(env, p), run),
    isReady: async (p) => ((await fetch(`http://127.0.0.1:${p}/healthz`)).ok ? true : undefined),
    readyTimeoutMs: 60_000,
    intervalMs: 200,
  });
}

/**
 * The console on `port`, ready once its own /healthz answers with its pid: another server on the
 * same port (a gateway, another make run's console) answering /healthz does not count.
 */
export function startConsole(
  env: NodeJS.ProcessEnv,
  run: RunOptions,
  port: number | undefined,
): Promise<Launched> {
  return launchOnFreePort({
    what: 'console /healthz',
    port,
    start: (p) => startComponent(consoleComponent(env, p), run),
    isReady: async (p, proc) => {
      const answer = (await (await fetch(`http://127.0.0.1:${p}/healthz`)).json()) as { pid?: unknown };
      return answer.pid === proc.pid ? true : undefined;
    },
    readyTimeoutMs: 60_000,
    intervalMs: 200,
  });
}

/** How the platform runs its components: echoing their output or not, logging under stateDir. */
export interface RunOptions {
  echo: boolean;
  stateDir: string;
  /** Entry points run from their bundle (local/bundle.ts: node's arguments) rather than through tsx. */
  bundles: ReadonlyMap<string, readonly string[]>;
}

/**
 * The components run from a bundle: the gateway and the operator, whose restarts after a crash the
 * chaos soak times (a restart is mostly the modules' load) and which, as their images do, locate no
 * file beside their sources. The kubelet stand-in and the console do, and run through tsx.
 */
export const BUNDLED_ENTRIES = ['gateway/main.ts', 'operator/main.ts'];

export function startComponent(component: Component, run: RunOptions): ManagedProcess {
  const bundle = run.bundles.get(component.entry);
  return startProcess({
    name: component.name,
    // tsx as a loader, not its CLI: the CLI runs the program in a child process of its own, which
    // would outlive the CLI if that were killed.
    command: process.execPath,
    args: bundle ? [...bundle] : ['--import', 'tsx', path.join(ROOT, component.entry)],
    env: component.env,
    cwd: ROOT,
    echo: run.echo,
    ownProcessGroup: true,
    logFile: path.join(run.stateDir, `${component.name}.log`),
  });
}
