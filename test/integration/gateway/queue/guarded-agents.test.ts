import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { compileAddressPolicy } from '../../../../gateway/queue/core/address-policy.js';
import {
  createGuardedAgents,
  FREE_SOCKET_TIMEOUT_MS,
  freeSocketCap,
  type GuardedAgents,
} from '../../../../gateway/queue/workers/guarded-agents.js';
import { createHttpDeliverer } from '../../../../gateway/queue/workers/http-delivery.js';
import { waitFor } from '../../../../local/wait.js';
import { closeServer } from '../../../helpers/queue/test-receiver.js';

/** The default worker concurrency, which delivery-workers.ts gives each binding's agents as maxSockets. */
const BURST = 64;
const CAP = freeSocketCap(BURST);

/**
 * One binding's delivery agents (delivery-workers.ts makes them per binding) after a burst of
 * deliveries to a receiver that never closes an idle connection: the sockets they keep idle.
 */
describe("a binding's delivery agents after a burst to one host", () => {
  let receiver: http.Server;
  let agents: GuardedAgents;
  const open = new Set<Socket>();
  const held: http.ServerResponse[] = [];

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => held.push(res));
    });
    // No keep-alive timeout: the receiver keeps every connection until its client closes it.
    receiver.keepAliveTimeout = 0;
    receiver.on('connection', (socket: Socket) => {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    agents = createGuardedAgents({ policy: compileAddressPolicy(['127.0.0.0/8']), maxSockets: BURST });
  });
  afterAll(async () => {
    for (const res of held) res.end();
    agents?.http.destroy();
    await closeServer(receiver);
  });

  const poll = (what: string, check: () => boolean, timeoutMs = 30_000) =>
    waitFor(what, async () => check() || undefined, { timeoutMs, intervalMs: 20 });
  const count = (pool: NodeJS.ReadOnlyDict<Socket[]>) =>
    Object.values(pool).reduce((sum, sockets) => sum + (sockets?.length ?? 0), 0);

  it(`when ${BURST} concurrent deliveries have been answered, then the agent keeps at most ${CAP} of their sockets idle and closes the rest, and closes those once they idle past the free-socket timeout`, async () => {
    const deliver = createHttpDeliverer({ agents, maxRedirects: 0 });
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const deliveries = Array.from({ length: BURST }, () =>
      deliver({ url, method: 'POST', headers: {}, body: Buffer.from('x'), timeoutMs: 120_000 }),
    );
    // Every delivery held open at once: the burst has one connection each.
    await poll('every delivery at the receiver at once', () => held.length === BURST);
    expect(open.size).toBe(BURST);
    for (const res of held.splice(0)) res.end();
    expect((await Promise.all(deliveries)).every((result) => result.ok)).toBe(true);

    await poll('every socket handed back to the agent', () => count(agents.http.sockets) === 0);
    expect(count(agents.http.freeSockets)).toBeLessThanOrEqual(CAP);
    await poll(`the receiver down to at most ${CAP} connections`, () => open.size <= CAP);

    await poll('the idle sockets closed', () => open.size === 0, FREE_SOCKET_TIMEOUT_MS + 30_000);
    expect(count(agents.http.freeSockets)).toBe(0);
  }, 120_000);
});
