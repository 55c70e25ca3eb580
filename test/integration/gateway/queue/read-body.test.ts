import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { RequestBodyTooLargeError } from '../../../../gateway/queue/core/errors.js';
import { readBody } from '../../../../gateway/queue/http/read-body.js';
import { closeServer } from '../../../helpers/queue/test-receiver.js';

const LIMIT = 1_024;

/** A server that reads each body with the limit and answers its length, or the error's name with a 400. */
describe('reading a request body with a limit', () => {
  let server: http.Server;
  let url: string;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      readBody(req, LIMIT).then(
        (body) => res.writeHead(200).end(String(body.length)),
        (err: Error) => res.writeHead(400).end(err.name),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    await closeServer(server);
  });

  /** Sends `chunks` with chunked transfer encoding (no Content-Length), one write each. */
  function sendChunked(chunks: Buffer[]): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = http.request(url, { method: 'POST' }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      for (const chunk of chunks) req.write(chunk);
      req.end();
    });
  }

  it('when the body is within the limit, then it is read whole, in one piece or many', async () => {
    expect(await (await fetch(url, { method: 'POST', body: Buffer.alloc(LIMIT, 1) })).text()).toBe(
      String(LIMIT),
    );
    expect(await sendChunked([Buffer.alloc(500), Buffer.alloc(500), Buffer.alloc(24)])).toEqual({
      status: 200,
      text: String(LIMIT),
    });
    expect(await (await fetch(url, { method: 'POST' })).text()).toBe('0');
  });

  it('when Content-Length is over the limit, then the body is refused', async () => {
    const response = await fetch(url, { method: 'POST', body: Buffer.alloc(LIMIT + 1) });
    expect(response.status).toBe(400);
    expect(await response.text()).toBe(RequestBodyTooLargeError.name);
  });

  it('when a chunked body grows over the limit, then it is refused', async () => {
    expect(await sendChunked([Buffer.alloc(1_000), Buffer.alloc(1_000)])).toEqual({
      status: 400,
      text: RequestBodyTooLargeError.name,
    });
  });
});
