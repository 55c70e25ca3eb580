import path from 'node:path';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { getFreePort } from '../../../local/ports.js';
import { startProcess, type ManagedProcess } from '../../../local/process.js';
import { waitFor } from '../../../local/wait.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';

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
      SETTEE_LEASE_DURATION: '2s',
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

  it('when the configuration is invalid, then it refuses to start with exit code 2 and lists every problem', async () => {
    const operator = launch({ SETTEE_WORKERS: 'zero', SETTEE_LOG_LEVEL: 'chatty' });
    expect(await operator.exited).toBe(2);
    expect(operator.output()).toMatch(/SETTEE_WORKERS=zero/);
    expect(operator.output()).toMatch(/SETTEE_LOG_LEVEL=chatty/);
  });
});
