import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startProcess } from '../../../local/process.js';
import { waitFor } from '../../../local/wait.js';

/**
 * A child that writes half a stdout line, then (once the parent has it) a stderr line, then the
 * rest of the stdout line: each step waits for a file the test writes, so the order the parent
 * reads the two pipes in is fixed, whatever the machine's load.
 */
const CHILD = `
const fs = require('node:fs');
const [dir] = process.argv.slice(1);
const until = (name) => new Promise((resolve) => {
  const poll = () => (fs.existsSync(dir + '/' + name) ? resolve() : setTimeout(poll, 10));
  poll();
});
(async () => {
  process.stdout.write('{"half":');
  await until('1');
  process.stderr.write('a warning\\n');
  await until('2');
  process.stdout.write('"whole"}\\n');
})();
`;

describe('a managed process output', () => {
  it('when a stderr line arrives in the middle of a stdout line, then both lines are read whole', async () => {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'settee-process-output-'));
    const lines: string[] = [];
    const proc = startProcess({
      name: 'halves',
      command: process.execPath,
      args: ['-e', CHILD, dir],
      onLine: (line) => lines.push(line),
    });
    try {
      const seen = (text: string) => async () => (proc.output().includes(text) ? true : undefined);
      await waitFor('the first half', seen('{"half":'), { timeoutMs: 30_000, intervalMs: 10 });
      fs.writeFileSync(path.join(dir, '1'), '');
      await waitFor('the stderr line', seen('a warning'), { timeoutMs: 30_000, intervalMs: 10 });
      fs.writeFileSync(path.join(dir, '2'), '');
      expect(await proc.exited).toBe(0);
      expect(lines).toEqual(['a warning', '{"half":"whole"}']);
    } finally {
      await proc.stop();
      await fsp.rm(dir, { recursive: true, force: true });
    }
  });
});
