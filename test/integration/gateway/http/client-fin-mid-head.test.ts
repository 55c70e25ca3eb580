import { useBothPathGateways } from '../../../helpers/gateway/both-paths.js';
import { jsonBodyOf, RawConnection, statusOf } from '../../../helpers/gateway/raw-connection.js';
import { startRecordingEngine } from '../../../helpers/gateway/recording-engine.js';

/**
 * A client that sends its FIN before its request head is whole (a script piping a cut request, a
 * client that half-closes after writing): node:http's parser ends in HPE_INVALID_EOF_STATE and the
 * gateway's clientError answer (client-error.ts) says 400 in CouchDB's shape; nginx closes without
 * an answer. The fast path, which reads heads itself, must answer as the gateway's node:http path
 * does, so that a client sees the same whichever path its connection took; nothing reaches the
 * engine either way, and a FIN with no bytes before it gets no answer on either.
 */
describe('a client FIN before the request head is whole', () => {
  const setup = useBothPathGateways('gw-finhead', () => startRecordingEngine((_req, res) => res.end('{}')));
  const cut = (): string => `GET /db/${setup.namespace.name}/paid/doc HTTP/1.1\r\nHost: gw\r\nAccept: app`;

  it.each([
    ['in the same segment', 'on'],
    ['in the same segment', 'off'],
    ['after a pause', 'on'],
    ['after a pause', 'off'],
  ] as const)(
    'when the FIN comes %s (fast path %s), then the client gets 400 bad_request and the connection closes',
    async (when, fastPath) => {
      const seen = setup.engine.seen.length;
      const client = new RawConnection(setup.gateways[fastPath].port);
      if (when === 'in the same segment') client.end(cut());
      else {
        client.write(cut());
        await new Promise((resolve) => setTimeout(resolve, 100));
        client.end();
      }
      const { text, closedByServer } = await client.finish(5_000);
      expect(closedByServer).toBe(true);
      expect(statusOf(text)).toBe(400);
      expect(jsonBodyOf(text)).toEqual({ error: 'bad_request', reason: 'the request is not valid HTTP' });
      expect(setup.engine.seen.length).toBe(seen);
    },
  );

  // Empty lines before a request line are skipped (RFC 9112 section 2.2, as llhttp does): not a head.
  it.each([
    ['no bytes come', 'on', ''],
    ['no bytes come', 'off', ''],
    ['only an empty line comes', 'on', '\r\n'],
    ['only an empty line comes', 'off', '\r\n'],
  ] as const)(
    'when %s before the FIN (fast path %s), then the connection closes with no answer',
    async (_what, fastPath, bytes) => {
      const client = new RawConnection(setup.gateways[fastPath].port);
      client.end(bytes);
      const { text, closedByServer } = await client.finish(5_000);
      expect(closedByServer).toBe(true);
      expect(text).toBe('');
    },
  );

  it.each(['on', 'off'] as const)(
    'when an empty line and the FIN follow an answered request (fast path %s), then that answer is all the client gets',
    async (fastPath) => {
      const client = new RawConnection(setup.gateways[fastPath].port);
      client.write(`GET /db/${setup.namespace.name}/paid/doc HTTP/1.1\r\nHost: gw\r\n\r\n`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      client.end('\r\n');
      const { text, closedByServer } = await client.finish(5_000);
      expect(closedByServer).toBe(true);
      expect(statusOf(text)).toBe(200);
      expect(text.match(/HTTP\/1\.1 \d{3}/g)).toHaveLength(1);
    },
  );
});
