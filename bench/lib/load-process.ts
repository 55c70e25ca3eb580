import { pathToFileURL } from 'node:url';
import type { ManagedProcess } from '../../local/process.js';
import { startTsProcess, type TsProcessOptions } from './processes.js';

/**
 * Load generators run as processes of their own, so they do not share an event loop with what
 * they measure: the parent passes the spec as JSON in argv[2] and reads one line of result JSON.
 */

/** Parent side: runs the load generator `file` (relative to the repository) with `spec`. */
export async function runLoadProcess<Spec, Result>(
  file: string,
  spec: Spec,
  options: Pick<TsProcessOptions, 'onLine'> & {
    /** Called with the process once started, so a caller that fails meanwhile can stop it. */
    onStart?: (proc: ManagedProcess) => void;
  } = {},
): Promise<Result> {
  const { onStart, ...processOptions } = options;
  const proc: ManagedProcess = startTsProcess('load', file, [JSON.stringify(spec)], processOptions);
  onStart?.(proc);
  const exit = await proc.exited;
  const line = proc
    .output()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'));
  if (exit !== 0 || !line) throw new Error(`load generator ${file} failed (${exit}): ${proc.output()}`);
  return JSON.parse(line) as Result;
}

/**
 * Child side: when the module at `moduleUrl` is the process's entry point, runs `run` on the spec,
 * prints its result and exits (when the module is only imported, for its parent-side helper, nothing).
 */
export function serveLoadProcess<Spec, Result>(
  moduleUrl: string,
  run: (spec: Spec) => Promise<Result>,
): void {
  if (moduleUrl !== pathToFileURL(process.argv[1] ?? '').href || !process.argv[2]) return;
  run(JSON.parse(process.argv[2]) as Spec).then(
    (result) => {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      process.exit(0);
    },
    (err: unknown) => {
      process.stderr.write(`${String(err)}\n`);
      process.exit(1);
    },
  );
}
