import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { getFreePort } from '../../../local/ports.js';
import { startProcess, type ManagedProcess } from '../../../local/process.js';
import { waitFor } from '../../../local/wait.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { TcpForwarder } from '../../helpers/tcp-forwarder.js';

const namespace = useTestNamespace('main');
const TSX = path.resolve('node_modules/.bin/tsx');

describe('the operator process (operator/main.ts)', () => {
  const processes: ManagedProcess[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.stop(2_000)));
  });

  function launch(env: Record<string, string>): ManagedProcess {
    const child = startProcess({
      name: 'operator',
      command: TSX,
      args: ['operator/main.ts'],
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    });
    processes.push(child);
    return child;
  }

  it('when started against the API server, then it becomes Ready and leader, and SIGTERM releases the Lease and exits 0', async () => {
    const port = await getFreePort();
    const operator = launch({
      KUBECONFIG: testControlPlane().kubeconfigPath,
      SETTEE_WATCH_NAMESPACE: namespace.name,
      SETTEE_METRICS_PORT: String(port),
      SETTEE_LEADER_ELECTION_IDENTITY: 'main-test',
      SETTEE_LEASE_DURATION: '3s',
      SETTEE_LEASE_RENEW_DEADLINE: '1500ms',
      SETTEE_LEASE_RETRY_PERIOD: '200ms',
    });
    await waitFor(
      'the operator to be Ready and leading',
      async () => {
        const metrics = await fetch(`http://127.0.0.1:${port}/metrics`);
        return /^settee_leader 1$/m.test(await metrics.text()) ? true : undefined;
      },
      { timeoutMs: 30_000, abort: operator.exited },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${operator.output()}`);
    });
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    const leases = testControlPlane().kubeConfig.makeApiClient(CoordinationV1Api);
    const held = await leases.readNamespacedLease({ name: 'settee-operator', namespace: namespace.name });
    expect(held.spec?.holderIdentity).toBe('main-test');

    process.kill(operator.pid, 'SIGTERM');
    expect(await operator.exited).toBe(0);
    const released = await leases.readNamespacedLease({ name: 'settee-operator', namespace: namespace.name });
    expect(released.spec?.holderIdentity).toBeUndefined();
    // Logs are JSON lines with the component field.
    const lines = operator
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'));
    expect(lines.length).toBeGreaterThan(0);
    expect(JSON.parse(lines[0]!)).toMatchObject({ component: 'operator' });
    expect(lines.some((line) => JSON.parse(line).message === 'released the Lease')).toBe(true);
  });

  it('when it can no longer renew the Lease, then it exits with code 3 shortly after the renew deadline, without releasing it', async () => {
    const forwarder = await TcpForwarder.start(testControlPlane().server);
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-main-test-'));
    try {
      const kubeconfigPath = path.join(dir, 'kubeconfig');
      await fs.writeFile(
        kubeconfigPath,
        forwarder.kubeConfigThrough(testControlPlane().kubeConfig).exportConfig(),
      );
      const port = await getFreePort();
      const operator = launch({
        KUBECONFIG: kubeconfigPath,
        SETTEE_WATCH_NAMESPACE: namespace.name,
        SETTEE_METRICS_PORT: String(port),
        SETTEE_LEADER_ELECTION_IDENTITY: 'losing',
        SETTEE_LEADER_ELECTION_LEASE: 'losing-operator',
        SETTEE_LEASE_DURATION: '3s',
        SETTEE_LEASE_RENEW_DEADLINE: '1500ms',
        SETTEE_LEASE_RETRY_PERIOD: '200ms',
      });
      await waitFor(
        'the operator to lead',
        async () => {
          const metrics = await fetch(`http://127.0.0.1:${port}/metrics`);
          return /^settee_leader 1$/m.test(await metrics.text()) ? true : undefined;
        },
        { timeoutMs: 30_000, abort: operator.exited },
      );
      await forwarder.cut();
      const cutAt = Date.now();
      const exit = await Promise.race([
        operator.exited,
        new Promise((resolve) => setTimeout(resolve, 10_000, 'still running')),
      ]);
      const exitedAfterMs = Date.now() - cutAt;
      expect(exit).toBe(3);
      // Renew deadline 1.5 s (plus up to a retry period), then a grace of 650 ms at most; the
      // margin is wide for a loaded machine, and far under the 10 s that would mean it hangs.
      expect(exitedAfterMs).toBeLessThan(1_500 + 200 + 650 + 3_000);
      expect(operator.output()).toMatch(/exiting after losing leadership/);
      const leases = testControlPlane().kubeConfig.makeApiClient(CoordinationV1Api);
      const lease = await leases.readNamespacedLease({ name: 'losing-operator', namespace: namespace.name });
      expect(lease.spec?.holderIdentity).toBe('losing');
    } finally {
      await forwarder.cut();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('when the configuration is invalid, then it refuses to start with exit code 2 and lists every problem', async () => {
    const operator = launch({ SETTEE_WORKERS: 'zero', SETTEE_LOG_LEVEL: 'chatty' });
    expect(await operator.exited).toBe(2);
    expect(operator.output()).toMatch(/SETTEE_WORKERS=zero/);
    expect(operator.output()).toMatch(/SETTEE_LOG_LEVEL=chatty/);
  });
});
