import net from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

/**
 * A loopback TCP relay in front of the real kube-apiserver, so a test can break a client's
 * connections the way a network or API-server outage does: `cut()` drops every open connection
 * and refuses new ones until `restore()`. TLS passes through untouched (the serving certificate
 * names 127.0.0.1, which the relay also listens on).
 */
export class TcpForwarder {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly target: { host: string; port: number },
    readonly port: number,
  ) {}

  static async start(targetUrl: string): Promise<TcpForwarder> {
    const url = new URL(targetUrl);
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen({ host: '127.0.0.1', port: 0 }, resolve));
    const { port } = probe.address() as net.AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    const forwarder = new TcpForwarder({ host: url.hostname, port: Number(url.port) }, port);
    await forwarder.restore();
    return forwarder;
  }

  /** A copy of `kubeConfig` whose cluster is reached through this relay. */
  kubeConfigThrough(kubeConfig: KubeConfig): KubeConfig {
    const copy = new KubeConfig();
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    copy.loadFromOptions({
      clusters: [{ ...cluster, server: `https://127.0.0.1:${this.port}` }],
      users: kubeConfig.users,
      contexts: kubeConfig.contexts,
      currentContext: kubeConfig.getCurrentContext(),
    });
    return copy;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  async restore(): Promise<void> {
    if (this.server) return;
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target);
      this.sockets.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      const drop = (): void => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: '127.0.0.1', port: this.port }, () => resolve());
    });
    this.server = server;
  }
}
