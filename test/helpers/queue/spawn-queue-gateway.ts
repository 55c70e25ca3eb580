import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleEntry } from '../../../local/bundle.js';
import { startProcess, type ManagedProcess } from '../../../local/process.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const GATEWAY_PROCESS = 'test/helpers/queue/queue-gateway-process.ts';

let bundled: Promise<string> | undefined;

/**
 * QUEUE_GATEWAY_NODE_FLAGS (space-separated) are given to each spawned gateway's node, to profile
 * a benchmark's gateway (`--cpu-prof --cpu-prof-dir=<dir>`, `--trace-gc`): NODE_OPTIONS may not
 * carry --cpu-prof, and would reach every other process too.
 */
function nodeFlags(): string[] {
  return (process.env.QUEUE_GATEWAY_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '');
}

export interface QueueGatewayProcess {
  proc: ManagedProcess;
  baseUrl: string;
}

/**
 * Starts queue-gateway-process.ts (the queue handler and delivery workers in a process of their own,
 * for tests that kill it and for benchmarks) serving `targets`, configured by the SETTEE_QUEUE_*
 * variables in `env`; resolves once it listens.
 */
export async function spawnQueueGateway(options: {
  targets: QueueTarget[];
  env: Record<string, string>;
  /** false leaves the delivery workers off; default on. */
  workers?: boolean;
  /**
   * true runs the process from its esbuild bundle (local/bundle.ts) with plain node, as the local
   * platform runs the gateway: benchmarks measure that JavaScript, not tsx's loader output, whose
   * `__name` wrapper on every closure made per request cost about 5% of a publish's CPU. Tests
   * keep tsx's loader (default), which needs no build.
   */
  bundled?: boolean;
  /** Node flags besides QUEUE_GATEWAY_NODE_FLAGS (a benchmark's GC trace), and who reads the output lines. */
  nodeFlags?: readonly string[];
  onLine?: (line: string) => void;
}): Promise<QueueGatewayProcess> {
  // Built once per process: every later gateway a benchmark starts is plain node from the same file.
  const script = options.bundled ? await (bundled ??= bundleEntry(GATEWAY_PROCESS)) : undefined;
  const proc = startProcess({
    name: 'queue-gateway',
    // node with tsx's loader, not the tsx CLI: the CLI runs the script in a child process, and a
    // SIGKILL to the CLI would leave that child delivering.
    command: process.execPath,
    args: [
      ...nodeFlags(),
      ...(options.nodeFlags ?? []),
      ...(script ? [script] : ['--import', 'tsx', path.join(ROOT, GATEWAY_PROCESS)]),
    ],
    cwd: ROOT,
    env: {
      ...process.env,
      ...options.env,
      SETTEE_TEST_QUEUE_TARGETS: JSON.stringify(options.targets),
      SETTEE_TEST_QUEUE_WORKERS: String(options.workers ?? true),
    },
    ...(options.onLine ? { onLine: options.onLine } : {}),
  });
  try {
    const baseUrl = await waitFor(
      'the queue gateway process to listen',
      async () => /listening (\S+)/.exec(proc.output())?.[1],
      // Generous: under tsx's loader a start at load averages of 50-70 on the shared 2 cores took
      // over 30 s (gateway-crash.test.ts failed so in 2 of 3 runs on 2026-11-28); a bundle loads faster.
      { timeoutMs: 90_000, abort: proc.exited },
    );
    return { proc, baseUrl };
  } catch (err) {
    await proc.stop(1_000);
    throw err;
  }
}
