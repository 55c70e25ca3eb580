import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isProcessAlive } from '../../../local/process.js';
import { waitFor } from '../../../local/wait.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/**
 * A parent like make run: a watchdog, one child in its own process group, one in the parent's, and
 * one started without saying (as Redis, etcd and the API server are).
 */
const PARENT = `
import { startParentWatchdog } from ${JSON.stringify(path.join(ROOT, 'local/parent-watchdog.ts'))};
import { startProcess } from ${JSON.stringify(path.join(ROOT, 'local/process.ts'))};
const watchdog = startParentWatchdog({ graceMs: 2000 });
const grouped = startProcess({ name: 'grouped', command: 'sleep', args: ['60'], ownProcessGroup: true });
const plain = startProcess({ name: 'plain', command: 'sleep', args: ['60'], ownProcessGroup: false });
const unsaid = startProcess({ name: 'unsaid', command: 'sleep', args: ['60'] });
console.log(JSON.stringify({ pids: [grouped.pid, plain.pid, unsaid.pid] }));
if (process.argv.includes('--orderly')) {
  process.on('SIGTERM', async () => {
    for (const child of [grouped, plain, unsaid]) await child.stop();
    watchdog.release();
    process.exit(0);
  });
}
// As make run does until its orderly stop, which this parent leaves to the test.
if (process.argv.includes('--holds-ctrl-c')) process.on('SIGINT', () => undefined);
setInterval(() => undefined, 1000);
`;

async function startParent(dir: string, args: string[] = []) {
  const script = path.join(dir, 'parent.ts');
  await fs.writeFile(script, PARENT);
  const parent = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    // A process group of its own, as a terminal's foreground job is: a test can send it a Ctrl-C.
    detached: true,
  });
  let out = '';
  parent.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const { pids } = await waitFor(
    'the parent to start its children',
    async () => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      return line ? (JSON.parse(line) as { pids: number[] }) : undefined;
    },
    { timeoutMs: 30_000 },
  );
  return { parent, pids };
}

describe('the children of make run end with it', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-watchdog-'));
  });
  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  it('when the parent is killed with SIGKILL, then the watchdog stops every child it started, in a group of its own or not', async () => {
    const { parent, pids } = await startParent(dir);
    expect(pids.every(isProcessAlive)).toBe(true);
    parent.kill('SIGKILL');
    await waitFor('the children to end', async () => (pids.some(isProcessAlive) ? undefined : true), {
      timeoutMs: 10_000,
    });
  }, 45_000);

  it("when a Ctrl-C reaches the terminal, then it ends only a child kept in the parent's process group: one started without saying waits for the parent to stop it", async () => {
    const { parent, pids } = await startParent(dir, ['--holds-ctrl-c']);
    const [grouped, plain, unsaid] = pids as [number, number, number];
    try {
      // What the terminal does on Ctrl-C: SIGINT to every process of the foreground group.
      process.kill(-parent.pid!, 'SIGINT');
      await waitFor(
        "the child in the parent's group to end",
        async () => !isProcessAlive(plain) || undefined,
        {
          timeoutMs: 10_000,
        },
      );
      expect(isProcessAlive(grouped)).toBe(true);
      expect(isProcessAlive(unsaid)).toBe(true);
    } finally {
      parent.kill('SIGKILL');
      await waitFor('the children to end', async () => (pids.some(isProcessAlive) ? undefined : true), {
        timeoutMs: 10_000,
      });
    }
  }, 45_000);

  it('when the parent stops in order, then the watchdog leaves with it and touches nothing else', async () => {
    const { parent, pids } = await startParent(dir, ['--orderly']);
    const bystander = spawn('sleep', ['30']);
    try {
      parent.kill('SIGTERM');
      await new Promise((resolve) => parent.once('exit', resolve));
      await waitFor('the children to end', async () => (pids.some(isProcessAlive) ? undefined : true), {
        timeoutMs: 10_000,
      });
      expect(isProcessAlive(bystander.pid ?? -1)).toBe(true);
    } finally {
      bystander.kill('SIGKILL');
    }
  }, 45_000);
});
