import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ManagedProcess } from '../../local/process.js';
import { startTsProcess, type TsProcessOptions } from './processes.js';

/**
 * Load generators run as processes of their own, so they do not share an event loop with what
 * they measure: the parent passes the spec as JSON in argv[2] and a file in argv[3], where the
 * child writes its result JSON (a file, not stdout: a result of hundreds of kilobytes may not all
 * have been read from the pipe when the child's exit is seen).
 */

/** Parent side: runs the load generator `file` (relative to the repository) with `spec`. */
export async function runLoadProcess<Spec, Result>(
  file: string,
  spec: Spec,
  options: Pick<TsProcessOptions, 'onLine' | 'flags' | 'env'> & {
    /** Called with the process once started, so a caller that fails meanwhile can stop it. */
    onStart?: (proc: ManagedProcess) => void;
  } = {},
): Promise<Result> {
  const { onStart, ...processOptions } = options;
  const folder = await fsp.mkdtemp(path.join(os.tmpdir(), 'settee-load-'));
  try {
    const resultFile = path.join(folder, 'result.json');
    const proc: ManagedProcess = startTsProcess(
      'load',
      file,
      [JSON.stringify(spec), resultFile],
      processOptions,
    );
    onStart?.(proc);
    const exit = await proc.exited;
    const result = await fsp.readFile(resultFile, 'utf8').catch(() => undefined);
    if (exit !== 0 || result === undefined)
      throw new Error(`load generator ${file} failed (${exit}): ${proc.output()}`);
    return JSON.parse(result) as Result;
  } finally {
    await fsp.rm(folder, { recursive: true, force: true });
  }
}

/**
 * Child side: when the module at `moduleUrl` is the process's entry point, runs `run` on the spec,
 * writes its result to the result file and exits (when the module is only imported, for its
 * parent-side helper, nothing).
 */
export function serveLoadProcess<Spec, Result>(
  moduleUrl: string,
  run: (spec: Spec) => Promise<Result>,
): void {
  const [, entry, spec, resultFile] = process.argv;
  if (moduleUrl !== pathToFileURL(entry ?? '').href || !spec || !resultFile) return;
  run(JSON.parse(spec) as Spec)
    .then((result) => fsp.writeFile(resultFile, JSON.stringify(result)))
    .then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`${String(err)}\n`);
        process.exit(1);
      },
    );
}
