import net from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

interface Relayed {
  client: net.Socket;
  upstream: net.Socket;
  frozen: boolean;
}

/**
 * A loopback TCP relay in front of a real server (the kube-apiserver, a redis-server), so a test can
 * break a client's connections the way a network or server outage does: `cut()` drops every open
 * connection and refuses new ones until `restore()`; `freeze()` makes the open connections go
 * silent without closing them, as a half-open connection does when a peer or a NAT entry vanishes
 * (new connections still work). TLS passes through untouched (the kube-apiserver's serving
 * certificate names 127.0.0.1, which the relay also listens on).
 */
export class TcpForwarder {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private readonly relayed = new Set<Relayed>();
  /** Connections accepted so far: each new request of a client without keep-alive is one. */
  accepted = 0;

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
    this.relayed.clear();
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  /**
   * Every open connection stops carrying bytes either way (they are read and dropped), and one
   * side closing no longer closes the other: the client hears nothing more, not even an end.
   */
  freeze(): void {
    for (const relayed of this.relayed) {
      relayed.frozen = true;
      relayed.client.unpipe(relayed.upstream);
      relayed.upstream.unpipe(relayed.client);
      for (const socket of [relayed.client, relayed.upstream]) socket.on('data', () => undefined).resume();
    }
  }

  async restore(): Promise<void> {
    if (this.server) return;
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target);
      this.accepted += 1;
      const relayed: Relayed = { client, upstream, frozen: false };
      this.sockets.add(client).add(upstream);
      this.relayed.add(relayed);
      client.pipe(upstream).pipe(client);
      const drop = (socket: net.Socket): void => {
        this.sockets.delete(socket);
        socket.destroy();
        if (relayed.frozen) return;
        this.relayed.delete(relayed);
        for (const other of [client, upstream]) {
          this.sockets.delete(other);
          other.destroy();
        }
      };
      for (const socket of [client, upstream]) {
        socket.on('error', () => drop(socket)).on('close', () => drop(socket));
      }
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: '127.0.0.1', port: this.port }, () => resolve());
    });
    this.server = server;
  }
}
