import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isProcessAlive, startProcess } from '../../../local/process.js';
import { supervise, type SupervisedProcess } from '../../../local/supervise.js';
import { waitFor } from '../../../local/wait.js';

/** Appends its start time to `log`, then exits with EXIT_CODE, or stays up when that is unset. */
const SCRIPT = `
const fs = require('node:fs');
fs.appendFileSync(process.env.LOG, Date.now() + '\\n');
if (process.env.EXIT_CODE && fs.readFileSync(process.env.LOG, 'utf8').trim().split('\\n').length <= Number(process.env.EXITS)) {
  process.exit(Number(process.env.EXIT_CODE));
}
setInterval(() => undefined, 1000);
`;

describe('supervise', () => {
  let dir: string;
  let supervised: SupervisedProcess | undefined;

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-supervise-'));
  });
  afterEach(async () => {
    await supervised?.stop(1_000);
    await fs.rm(dir, { recursive: true, force: true });
  });

  const starts = async (log: string): Promise<number[]> =>
    (await fs.readFile(log, 'utf8').catch(() => '')).trim().split('\n').filter(Boolean).map(Number);

  function superviseScript(env: Record<string, string>, messages: string[] = []): SupervisedProcess {
    supervised = supervise({
      name: 'script',
      start: () =>
        startProcess({
          name: 'script',
          command: process.execPath,
          args: ['-e', SCRIPT],
          env: { PATH: process.env.PATH, ...env },
        }),
      restartBackoff: { baseMs: 100, maxMs: 1_000 },
      log: (message) => messages.push(message),
    });
    return supervised;
  }

  it('when the process exits on its own, then it is started again, and stop() ends it for good', async () => {
    const log = path.join(dir, 'starts');
    const messages: string[] = [];
    const script = superviseScript({ LOG: log, EXIT_CODE: '3', EXITS: '1' }, messages);
    const first = script.current();
    expect(await first.exited).toBe(3);
    // Each run is a new node process, which a loaded machine can take seconds to start.
    await waitFor('the restart', async () => (script.restarts === 1 ? true : undefined), {
      timeoutMs: 20_000,
    });
    const second = script.current();
    expect(second.pid).not.toBe(first.pid);
    await waitFor(
      'the second run to start',
      async () => ((await starts(log)).length === 2 ? true : undefined),
      {
        timeoutMs: 20_000,
      },
    );
    expect(isProcessAlive(second.pid)).toBe(true);
    // A first crash is restarted at once, as the kubelet restarts a container the first time.
    expect(messages).toEqual(['script exited (3); starting it again at once']);

    await script.stop(1_000);
    expect(isProcessAlive(second.pid)).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(script.restarts).toBe(1);
    expect(await starts(log)).toHaveLength(2);
  });

  it('when it keeps exiting at once, then the first restart waits nothing and each later one twice as long as the one before', async () => {
    const log = path.join(dir, 'starts');
    const messages: string[] = [];
    const script = superviseScript({ LOG: log, EXIT_CODE: '1', EXITS: '4' }, messages);
    // Five node processes started, and 0.7 s of backoff between them.
    await waitFor('four restarts', async () => ((await starts(log)).length >= 5 ? true : undefined), {
      timeoutMs: 30_000,
    });
    const times = await starts(log);
    const gaps = times.slice(1).map((time, i) => time - times[i]!);
    // Each run started no sooner than its backoff after the one before ended: 0, 100, 200, 400 ms.
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(i === 0 ? 0 : 100 * 2 ** (i - 1)));
    expect(messages).toEqual([
      'script exited (1); starting it again at once',
      'script exited (1); starting it again in 100 ms',
      'script exited (1); starting it again in 200 ms',
      'script exited (1); starting it again in 400 ms',
    ]);
    expect(isProcessAlive(script.current().pid)).toBe(true);
  });
});
