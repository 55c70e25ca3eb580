import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { waitFor } from '../../../local/wait.js';
import type { AddressInfo } from 'node:net';
import type { Gateway } from '../../../gateway/gateway.js';
import {
  createCouchInstance,
  setInstancePod,
  startTestGateway,
} from '../../helpers/gateway/gateway-harness.js';
import { request } from '../../helpers/gateway/http-request.js';
import { RawConnection, statusOf } from '../../helpers/gateway/raw-connection.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';

/**
 * Request framing on the fast path (SETTEE_GATEWAY_FAST_PATH=true; gateway/http/body-framing.ts):
 * chunk extensions and trailers, which llhttp takes, are read to the body's end and not passed on,
 * as the full path does not pass them on either. The instance's address is a relay that records
 * every byte the gateway sends it, in front of a node:http engine that answers with what it read.
 */

interface Engine {
  port: number;
  /** Every byte the gateway sent the instance, as latin1. */
  received(): string;
  close(): Promise<void>;
}

async function startRecordedEngine(): Promise<Engine> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = JSON.stringify({ url: req.url, body: Buffer.concat(chunks).toString('latin1') });
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const enginePort = (server.address() as AddressInfo).port;
  const bytes: Buffer[] = [];
  const sockets = new Set<net.Socket>();
  const relay = net.createServer((client) => {
    const upstream = net.connect(enginePort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('data', (chunk: Buffer) => {
      bytes.push(chunk);
      upstream.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.pipe(client);
  });
  relay.listen(0, '127.0.0.1');
  await once(relay, 'listening');
  return {
    port: (relay.address() as AddressInfo).port,
    received: () => Buffer.concat(bytes).toString('latin1'),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      await Promise.all([
        new Promise((resolve) => relay.close(resolve)),
        new Promise((resolve) => server.close(resolve)),
      ]);
    },
  };
}

const spliced = async (gateway: Gateway): Promise<number> => {
  const metrics = (await request(`${gateway.url}/metrics`)).body;
  const line = metrics.split('\n').find((l) => l.startsWith('settee_gateway_spliced_requests_total '));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
};

describe('request framing on the fast path', () => {
  const namespace = useTestNamespace('gw-fpframe');
  const { kubeConfig } = testControlPlane();
  let engine: Engine;
  let gateway: Gateway;
  let path: string;

  beforeAll(async () => {
    engine = await startRecordedEngine();
    const ref = { namespace: namespace.name, name: 'framed' };
    await createCouchInstance(kubeConfig, ref, { plan: 'paid' });
    await setInstancePod(kubeConfig, ref, { port: engine.port, ready: true });
    gateway = await startTestGateway({
      kubeConfig,
      namespace: namespace.name,
      env: { SETTEE_GATEWAY_FAST_PATH: 'true' },
      writers: { activityLease: async () => undefined, wakeRequest: async () => undefined },
    });
    path = `/db/${namespace.name}/framed`;
    await waitFor(
      'the instance routed',
      async () => ((await request(`${gateway.url}${path}/ready`)).status === 200 ? true : undefined),
      { timeoutMs: 30_000 },
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await engine?.close();
  });

  it('when a chunked body has extensions and trailers, then the instance gets its data chunks alone and answers', async () => {
    const before = await spliced(gateway);
    const sentBefore = engine.received().length;
    const connection = new RawConnection(gateway.port);
    connection.write(
      `PUT ${path}/doc HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\n\r\n` +
        `3;ext=v;q="a b"\r\nabc\r\n3\r\ndef\r\n0;last\r\nX-Checksum: 12\r\nConnection: close\r\n\r\n`,
    );
    const { text, closedByServer } = await connection.finish(5_000);
    expect(statusOf(text)).toBe(200);
    expect(text).toContain('{"url":"/doc","body":"abcdef"}');
    // The close among the trailers ends the connection, as llhttp would read nothing more on it.
    expect(text).toMatch(/\r\nConnection: close\r\n/i);
    expect(closedByServer).toBe(true);
    expect((await spliced(gateway)) - before).toBe(1);
    const sent = engine.received().slice(sentBefore);
    expect(sent).toMatch(/^PUT \/doc HTTP\/1\.1\r\n[^]*\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n$/);
  });

  it('when a head arrives in two segments, then it is still spliced; when its rest is slow, node:http reads it', async () => {
    const head = `GET ${path}/split HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n`;
    const cut = head.indexOf('Host');
    const send = async (pauseMs: number): Promise<{ status: number | undefined; spliced: number }> => {
      const before = await spliced(gateway);
      const connection = new RawConnection(gateway.port);
      connection.write(head.slice(0, cut));
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      connection.write(head.slice(cut));
      const { text } = await connection.finish(5_000);
      return { status: statusOf(text), spliced: (await spliced(gateway)) - before };
    };
    expect(await send(50)).toEqual({ status: 200, spliced: 1 });
    // Past the fast path's wait for the rest (1 s), the bytes go to node:http, which owns the headers timeout.
    expect(await send(1_500)).toEqual({ status: 200, spliced: 0 });
  });
});
