import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { probeSystemDatabases, probeUp } from '../../../couchdb/probe-up.js';
import { getFreePort } from '../../../local/ports.js';

// Generous, as a loaded 2-core machine needs: only the hung case waits for all of it, and it asserts
// that the probe's request arrived before the probe gave up, not when it gave up.
const TIMEOUT_MS = 5_000;

/** A stand-in CouchDB on loopback answering each path with the status the test sets. */
async function startServer(
  statuses: Record<string, number>,
): Promise<{ origin: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    const status = statuses[req.url ?? ''];
    // No status: the request is read and never answered (a CouchDB that accepted and hangs).
    if (status !== undefined) res.writeHead(status).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("the gateway's probe of a waking CouchDB", () => {
  it('when nothing listens at the address yet, then it is not up', async () => {
    const origin = `http://127.0.0.1:${await getFreePort()}`;
    await expect(probeUp(origin, TIMEOUT_MS)).resolves.toBe(false);
    await expect(probeSystemDatabases(origin, TIMEOUT_MS)).resolves.toBe(false);
  });

  it('when the port accepts and /_up answers 200, then it is up; when /_up answers 404 or 503, then it is not', async () => {
    const up = await startServer({ '/_up': 200 });
    const starting = await startServer({ '/_up': 503 });
    const maintenance = await startServer({ '/_up': 404 });
    try {
      await expect(probeUp(up.origin, TIMEOUT_MS)).resolves.toBe(true);
      await expect(probeUp(starting.origin, TIMEOUT_MS)).resolves.toBe(false);
      await expect(probeUp(maintenance.origin, TIMEOUT_MS)).resolves.toBe(false);
      expect(up.requests).toEqual(['/_up']);
    } finally {
      await Promise.all([up.close(), starting.close(), maintenance.close()]);
    }
  });

  it('when the port accepts and /_up never answers, then it is not up once the timeout has passed', async () => {
    const hung = await startServer({});
    try {
      await expect(probeUp(hung.origin, TIMEOUT_MS)).resolves.toBe(false);
      expect(hung.requests).toEqual(['/_up']);
    } finally {
      await hung.close();
    }
  });

  it('at a first start, when a system database answers 404, then it is not serving; when both answer 401, then it is', async () => {
    const missing = await startServer({ '/_users': 401, '/_replicator': 404 });
    const made = await startServer({ '/_users': 401, '/_replicator': 401 });
    try {
      await expect(probeSystemDatabases(missing.origin, TIMEOUT_MS)).resolves.toBe(false);
      await expect(probeSystemDatabases(made.origin, TIMEOUT_MS)).resolves.toBe(true);
    } finally {
      await Promise.all([missing.close(), made.close()]);
    }
  });
});
