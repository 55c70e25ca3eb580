import crypto from 'node:crypto';
import net from 'node:net';

/**
 * Picks a loopback address of its own for a pod (all of 127.0.0.0/8 is loopback on Linux), so its
 * engine listens on the template's own port. Random in 127.1.0.1 to 127.254.255.254, away from
 * 127.0.0.1 where everything else listens; one on which `port` cannot be bound (another pod,
 * another test worker's stand-in) is passed over.
 */
export async function allocatePodAddress(port: number, taken: ReadonlySet<string>): Promise<string> {
  for (let attempt = 0; attempt < 32; attempt++) {
    const [a = 1, b = 0, c = 1] = crypto.randomBytes(3);
    const address = `127.${1 + (a % 254)}.${b}.${1 + (c % 254)}`;
    if (!taken.has(address) && (await canBind(address, port))) return address;
  }
  throw new Error(`no free loopback address found for port ${port}`);
}

/** Whether `address` is in 127.0.0.0/8 and not 127.0.0.1 (a pod address the stand-in gave). */
export function isPodLoopbackAddress(address: string | undefined): address is string {
  return !!address && address !== '127.0.0.1' && net.isIPv4(address) && address.startsWith('127.');
}

export function canBind(address: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: address, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}
