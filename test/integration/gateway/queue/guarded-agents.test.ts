import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { compileAddressPolicy } from '../../../../gateway/queue/core/address-policy.js';
import {
  createGuardedAgents,
  FREE_SOCKET_TIMEOUT_MS,
  freeSocketCap,
  SURPLUS_SOCKET_TIMEOUT_MS,
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
  let accepted = 0;
  const held: http.ServerResponse[] = [];

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => held.push(res));
    });
    // No keep-alive timeout: the receiver keeps every connection until its client closes it.
    receiver.keepAliveTimeout = 0;
    receiver.on('connection', (socket: Socket) => {
      accepted += 1;
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

  /** BURST concurrent deliveries, answered once all of them are at the receiver: true if all succeeded. */
  async function burst(): Promise<boolean> {
    const deliver = createHttpDeliverer({ agents, maxRedirects: 0 });
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const deliveries = Array.from({ length: BURST }, () =>
      deliver({ url, method: 'POST', headers: {}, body: Buffer.from('x'), timeoutMs: 120_000 }),
    );
    await poll('every delivery at the receiver at once', () => held.length === BURST);
    for (const res of held.splice(0)) res.end();
    return (await Promise.all(deliveries)).every((result) => result.ok);
  }

  it(`when bursts of ${BURST} deliveries follow each other (a worker draining a backlog), then each burst reuses the sockets of the one before`, async () => {
    const before = accepted;
    for (let i = 0; i < 5; i++) expect(await burst()).toBe(true);
    // Closing the sockets freed beyond the idle cap at once reopened 48 of 64 for every burst (256
    // connections in all). One burst's worth of slack: a stall of over a second while a burst's
    // answers come in may let the surplus sockets freed first time out.
    expect(accepted - before).toBeLessThanOrEqual(2 * BURST);
    await poll('the idle sockets closed', () => open.size === 0, FREE_SOCKET_TIMEOUT_MS + 30_000);
  }, 120_000);

  it(`when ${BURST} concurrent deliveries have been answered, then the agent keeps at most ${CAP} of their sockets idle past ${SURPLUS_SOCKET_TIMEOUT_MS} ms and closes the rest, and closes those once they idle past the free-socket timeout`, async () => {
    const before = accepted;
    expect(await burst()).toBe(true);
    // Every delivery was held open at once: the burst had one connection each.
    expect(accepted - before).toBe(BURST);
    await poll('every socket handed back to the agent', () => count(agents.http.sockets) === 0);
    const idle = Object.values(agents.http.freeSockets).flatMap((sockets) => sockets ?? []);
    const timeouts = idle.map((socket) => socket.timeout);
    // Kept for the free-socket timeout: at most the cap; every other one for the surplus' timeout.
    expect(timeouts.filter((ms) => ms === FREE_SOCKET_TIMEOUT_MS).length).toBeLessThanOrEqual(CAP);
    expect(timeouts.filter((ms) => ms !== FREE_SOCKET_TIMEOUT_MS)).toEqual(
      timeouts.filter((ms) => ms === SURPLUS_SOCKET_TIMEOUT_MS),
    );
    await poll(`the receiver down to at most ${CAP} connections`, () => open.size <= CAP);
    expect(count(agents.http.freeSockets)).toBeLessThanOrEqual(CAP);

    await poll('the idle sockets closed', () => open.size === 0, FREE_SOCKET_TIMEOUT_MS + 30_000);
    expect(count(agents.http.freeSockets)).toBe(0);
  }, 120_000);
});
