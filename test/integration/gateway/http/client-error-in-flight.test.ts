import { useBothPathGateways } from '../../../helpers/gateway/both-paths.js';
import { RawConnection } from '../../../helpers/gateway/raw-connection.js';
import { type RecordingEngine, startRecordingEngine } from '../../../helpers/gateway/recording-engine.js';

/**
 * Bytes a client sends after a request that asked to close the connection make node's parser
 * report HPE_CLOSED_CONNECTION while that request's answer is still due or streaming. The gateway's
 * clientError answer must not be written into (or instead of) that answer (outside review, HIGH).
 */

/** A stand-in engine: a body streamed in two halves 300 ms apart, and a record of what reached it. */
const startEngine = (): Promise<RecordingEngine> =>
  startRecordingEngine((req, res) => {
    if (req.url === '/stream') {
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': 10 });
      res.write('part1');
      setTimeout(() => res.end('part2'), 300);
      return;
    }
    const text = JSON.stringify({ ok: true, url: req.url });
    res.writeHead(req.method === 'PUT' ? 201 : 200, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(text),
    });
    // Late, so that the pipelined bytes are parsed before the answer starts.
    setTimeout(() => res.end(text), 200);
  });

describe('bytes after a request that closes the connection', () => {
  const setup = useBothPathGateways('gw-clienterror', startEngine);
  // The fast path splices a `Connection: close` exchange itself and hands `Proxy-Connection: close`
  // to node:http; with it off, node:http takes both.
  const cases = (['on', 'off'] as const).flatMap((fastPath) =>
    ['Connection', 'Proxy-Connection'].map((header) => [header, fastPath] as const),
  );
  const path = (rest: string): string => `/db/${setup.namespace.name}/paid${rest}`;

  it.each(cases)(
    'when the client sends more bytes while a %s: close answer streams (fast path %s), then the answer arrives whole and nothing follows it',
    async (header, fastPath) => {
      const seen = setup.engine.seen.length;
      const client = new RawConnection(setup.gateways[fastPath].port);
      client.write(`GET ${path('/stream')} HTTP/1.1\r\nHost: gw\r\n${header}: close\r\n\r\n`);
      const deadline = Date.now() + 10_000;
      while (setup.engine.seen.length === seen && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      client.write(`GET ${path('/after')} HTTP/1.1\r\nHost: gw\r\n\r\n`);
      const end = await client.finish(10_000);
      expect(end.text).toMatch(/^HTTP\/1.1 200 OK\r\n[^]*\r\n\r\npart1part2$/);
      expect(end.closedByServer).toBe(true);
      expect(setup.engine.seen.slice(seen)).toEqual(['GET /stream']);
    },
  );

  it.each(cases)(
    'when a %s: close PUT has a request pipelined behind it (fast path %s), then the PUT is answered and the request behind it is not served',
    async (header, fastPath) => {
      const seen = setup.engine.seen.length;
      const client = new RawConnection(setup.gateways[fastPath].port);
      client.write(
        `PUT ${path('/doc')} HTTP/1.1\r\nHost: gw\r\n${header}: close\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}` +
          `GET ${path('/after')} HTTP/1.1\r\nHost: gw\r\n\r\n`,
      );
      const end = await client.finish(10_000);
      expect(end.text).toMatch(/^HTTP\/1.1 201 Created\r\n[^]*\r\n\r\n\{"ok":true,"url":"\/doc"\}$/);
      expect(end.closedByServer).toBe(true);
      expect(setup.engine.seen.slice(seen)).toEqual(['PUT /doc']);
    },
  );

  it('when a keep-alive answer streams and the client sends bytes that are no HTTP, then the connection is cut after what was sent and no 400 is written into it', async () => {
    const seen = setup.engine.seen.length;
    const client = new RawConnection(setup.gateways.off.port);
    client.write(`GET ${path('/stream')} HTTP/1.1\r\nHost: gw\r\n\r\n`);
    const deadline = Date.now() + 10_000;
    while (setup.engine.seen.length === seen && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    client.write('\x01\x02 not http\r\n\r\n');
    const end = await client.finish(10_000);
    expect(end.text).toMatch(/^HTTP\/1.1 200 OK\r\n[^]*\r\n\r\npart1(part2)?$/);
    expect(end.closedByServer).toBe(true);
  });
});
