import net from 'node:net';
import { ControlPlaneOutageError } from '../../../local/control-plane-outage.js';
import { startControlPlane } from '../../../local/control-plane.js';
import { waitFor } from '../../../local/wait.js';

// Far longer than the stop takes: an outage that waited it out would fail the test's deadline.
const OUTAGE_MS = 600_000;

/** true when a TCP connection to host:port is refused (nothing listens). */
function refused(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('a control plane stopped during an outage', () => {
  it('when stop() comes while kube-apiserver is down for an outage, then the outage ends at once with a ControlPlaneOutageError and kube-apiserver is not started again: its port stays closed', async () => {
    // A control plane of its own: the outage and the stop would end the one the other suites share.
    const plane = await startControlPlane();
    const server = new URL(plane.kubeConfig.getCurrentCluster()?.server ?? '');
    const host = server.hostname;
    const port = Number(server.port);
    let outage: Promise<void> | undefined;
    try {
      outage = plane.outage('kube-apiserver', OUTAGE_MS);
      // Handled now: it rejects during the stop below, before the expect reads it.
      outage.catch(() => undefined);
      await waitFor(
        'kube-apiserver to be down',
        async () => ((await refused(host, port)) ? true : undefined),
        {
          timeoutMs: 60_000,
          intervalMs: 100,
        },
      );
    } finally {
      await plane.stop();
    }
    await expect(outage).rejects.toBeInstanceOf(ControlPlaneOutageError);
    // The outage has settled: had it started kube-apiserver again, that one would hold the port.
    expect(await refused(host, port)).toBe(true);
  }, 240_000);
});
