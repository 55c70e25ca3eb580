import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { assertPortFree, LocalPlatformBusyError, lockStateDir } from '../../../local/run-lock.js';

describe('make run refuses to share its state folder or its gateway port', () => {
  let stateDir: string;
  beforeEach(async () => {
    stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-run-lock-'));
  });
  afterEach(() => fs.rm(stateDir, { recursive: true, force: true }));

  it('when another live process holds the folder, then the start is refused with its pid and how to stop it', async () => {
    const other = spawn('sleep', ['30']);
    try {
      await fs.writeFile(path.join(stateDir, 'run.pid'), `${other.pid}\n`);
      const refused = lockStateDir(stateDir);
      await expect(refused).rejects.toBeInstanceOf(LocalPlatformBusyError);
      await expect(refused).rejects.toThrow(
        `another \`make run\` (pid ${other.pid}) is running on ${stateDir}; stop it first (Ctrl-C in its terminal, or kill ${other.pid})`,
      );
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('when the holder is gone, then its lock is taken over, and released on stop', async () => {
    const gone = spawn('true');
    await new Promise((resolve) => gone.once('exit', resolve));
    await fs.writeFile(path.join(stateDir, 'run.pid'), `${gone.pid}\n`);
    const release = await lockStateDir(stateDir);
    expect((await fs.readFile(path.join(stateDir, 'run.pid'), 'utf8')).trim()).toBe(String(process.pid));
    await release();
    await expect(fs.stat(path.join(stateDir, 'run.pid'))).rejects.toThrow();
  });

  it('when the gateway port is taken, then the start is refused naming the port and the way out', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as net.AddressInfo;
    try {
      await expect(
        assertPortFree({
          port,
          what: 'gateway',
          hint: 'choose another port with SETTEE_GATEWAY_PORT=<port>',
        }),
      ).rejects.toThrow(
        `port ${port} on 127.0.0.1, where the gateway listens, is taken (by another \`make run\`?); choose another port with SETTEE_GATEWAY_PORT=<port>`,
      );
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
    await expect(assertPortFree({ port, what: 'gateway', hint: '' })).resolves.toBeUndefined();
  });
});
