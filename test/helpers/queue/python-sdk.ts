import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const INSTALL_SCRIPT = path.join(ROOT, 'local/tools/install-python-sdk.sh');

/** What test/python/sdk_checks.py prints: each check's value, or the error it raised. */
export type PythonSdkResults = Record<string, { value: unknown } | { error: string }>;

let venv: Promise<string> | undefined;

/**
 * The virtual environment holding QStash's Python SDK, as `make deps` installed it. The script is
 * asked not to install: a test reaches no address but loopback, so it fails naming make deps
 * instead of calling PyPI or apt-get.
 */
function pythonSdkVenv(): Promise<string> {
  venv ??= run('bash', [INSTALL_SCRIPT, '--installed'], { timeout: 30_000 }).then(({ stdout }) =>
    stdout.trim(),
  );
  return venv;
}

/**
 * Runs test/python/sdk_checks.py with the SDK pointed at `baseUrl` (QSTASH_URL, as a user of the
 * SDK sets it) and returns what it printed; its stderr (tracebacks of failed checks) is passed on.
 */
export async function runPythonSdkChecks(options: {
  baseUrl: string;
  token: string;
  destination: string;
  timeoutMs?: number;
}): Promise<PythonSdkResults> {
  const python = path.join(await pythonSdkVenv(), 'bin', 'python');
  const { stdout, stderr } = await run(python, [path.join(ROOT, 'test/python/sdk_checks.py')], {
    timeout: options.timeoutMs ?? 50_000,
    env: {
      PATH: process.env.PATH ?? '',
      QSTASH_URL: options.baseUrl,
      QSTASH_TOKEN: options.token,
      SETTEE_DESTINATION: options.destination,
    },
  });
  if (stderr) process.stderr.write(stderr);
  // The results are the last line: the SDK itself may print warnings before it.
  const last = stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(last) as PythonSdkResults;
  } catch {
    throw new Error(`sdk_checks.py printed no JSON results:\n${stdout}`);
  }
}
