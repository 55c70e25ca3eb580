import dc from 'node:diagnostics_channel';
import net from 'node:net';

/**
 * A safety net for tests of the SSRF guard, which by their nature hand the code private and
 * link-local addresses: every client socket this process creates is watched, and one about to
 * connect to an address `isForbidden` calls forbidden is destroyed before it connects and
 * recorded. A guard bug then fails the test instead of sending a packet off this machine.
 *
 * Hooks: `net.client.socket` fires before `socket.connect()` runs, so an IP-literal connect is
 * caught by wrapping that call; a named host is caught on the socket's `lookup` event, which Node
 * emits before it connects to the looked-up address (and it checks for a destroyed socket first).
 */
export interface NetworkTripwire {
  /** Addresses a socket tried to reach that were forbidden. */
  readonly violations: string[];
  /** Sockets created while installed. */
  readonly sockets: net.Socket[];
  /** Sockets that actually connected, with the address they reached. */
  readonly connected: string[];
  uninstall(): void;
}

const isNotLoopback = (address: string): boolean => {
  const plain = address.replace(/^::ffff:/i, '');
  return !(net.isIPv4(plain) && plain.startsWith('127.')) && plain !== '::1';
};

export function installNetworkTripwire(
  isForbidden: (address: string) => boolean = isNotLoopback,
): NetworkTripwire {
  const tripwire: NetworkTripwire = {
    violations: [],
    sockets: [],
    connected: [],
    uninstall: () => undefined,
  };
  /**
   * Destroys without an error, so the request fails with "socket hang up": its own listeners may
   * not be attached yet, and an unheard 'error' would crash the run. On the lookup path it must
   * happen at once (Node connects right after the event unless the socket is destroyed); on the
   * IP-literal path connect() is simply not called, and the destroy waits a tick for the listeners.
   */
  const trip = (socket: net.Socket, address: string, when: 'now' | 'next-tick'): boolean => {
    if (!isForbidden(address)) return false;
    tripwire.violations.push(address);
    if (when === 'now') socket.destroy();
    else process.nextTick(() => socket.destroy());
    return true;
  };
  const onSocket = (message: unknown): void => {
    const socket = (message as { socket: net.Socket }).socket;
    tripwire.sockets.push(socket);
    socket.on('connect', () => tripwire.connected.push(socket.remoteAddress ?? '?'));
    socket.on('lookup', (err: Error | null, address: string | undefined) => {
      if (!err && address) trip(socket, address, 'now');
    });
    const connect = socket.connect.bind(socket) as (...args: unknown[]) => net.Socket;
    (socket as unknown as { connect: (...args: unknown[]) => net.Socket }).connect = (...args: unknown[]) => {
      const first = args[0];
      const options = (Array.isArray(first) ? first[0] : first) as { host?: string } | undefined;
      const host = typeof options === 'object' && options !== null ? options.host : undefined;
      if (host && net.isIP(host) && trip(socket, host, 'next-tick')) return socket;
      return connect(...args);
    };
  };
  dc.subscribe('net.client.socket', onSocket);
  tripwire.uninstall = () => dc.unsubscribe('net.client.socket', onSocket);
  return tripwire;
}
