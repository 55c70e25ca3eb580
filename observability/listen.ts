import type { AddressInfo, Server } from 'node:net';

/**
 * Starts `server` listening on `host`:`port` (0 picks a free port) and resolves with the port it
 * got, or rejects with the listen error (a port in use) instead of leaving it unhandled. Shared by
 * the operator's health server and the gateway.
 */
export async function listen(server: Server, address: { host: string; port: number }): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: address.host, port: address.port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}
