import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const SCRIPT = path.resolve('local/tools/build-kube-tools.sh');

function runBuild(env: NodeJS.ProcessEnv): { status: number | null; stderr: string; stdout: string } {
  const result = spawnSync('bash', [SCRIPT], {
    env: { HOME: os.homedir(), ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: result.status, stderr: result.stderr, stdout: result.stdout };
}

describe('the Kubernetes tool build', () => {
  let emptyDir: string;
  beforeAll(() => {
    emptyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'settee-tools-'));
  });
  afterAll(() => fs.rmSync(emptyDir, { recursive: true, force: true }));

  it('when KUBEBUILDER_ASSETS lacks a binary, then it exits non-zero naming the binary and the folder', () => {
    const result = runBuild({ PATH: process.env.PATH, KUBEBUILDER_ASSETS: emptyDir });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(`KUBEBUILDER_ASSETS=${emptyDir} has no executable 'kube-apiserver'`);
  });

  it('when Go is missing and nothing is cached, then it exits non-zero and says how to provide the binaries', () => {
    // A PATH with bash, etcd and the coreutils the script needs, but no go.
    const bin = path.join(emptyDir, 'bin');
    fs.mkdirSync(bin, { recursive: true });
    for (const tool of ['bash', 'etcd', 'mkdir', 'ln', 'dirname', 'curl', 'sed', 'cut', 'touch']) {
      const found = spawnSync('bash', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
      if (found) fs.symlinkSync(found, path.join(bin, tool));
    }
    const result = runBuild({ PATH: bin, SETTEE_CACHE_DIR: path.join(emptyDir, 'cache') });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/go not found: .*set KUBEBUILDER_ASSETS/);
    expect(result.stdout).toBe('');
  });

  it('when the binaries are cached, then it prints their folder at once', () => {
    const started = Date.now();
    const result = runBuild({ PATH: process.env.PATH });
    expect(result.status).toBe(0);
    const dir = result.stdout.trim();
    for (const bin of ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'etcd', 'kubectl'])
      expect(fs.existsSync(path.join(dir, bin))).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
