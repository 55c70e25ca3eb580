import http from 'node:http';

export interface PlainResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: string;
}

/**
 * One request with node:http, so a test can set any header (Host included, which fetch forbids)
 * and see the response's headers exactly. A fresh connection each time. With `timeoutMs`, a
 * request that gets no answer in time rejects (a hang is a failure, not a stuck test).
 */
export function request(
  url: string,
  options: {
    method?: string;
    headers?: http.OutgoingHttpHeaders;
    body?: string | Buffer;
    timeoutMs?: number;
  } = {},
): Promise<PlainResponse> {
  const method = options.method ?? 'GET';
  // Node's client sends no length for a GET or DELETE body unless told: the server would read the
  // body as the next request.
  const headers =
    options.body !== undefined && !hasLengthHeader(options.headers)
      ? { ...options.headers, 'content-length': Buffer.byteLength(options.body) }
      : options.headers;
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false, timeout: options.timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          rawHeaders: res.rawHeaders,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () =>
      req.destroy(new Error(`no answer within ${options.timeoutMs} ms to ${method} ${url}`)),
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

export function basicAuth(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

function hasLengthHeader(headers: http.OutgoingHttpHeaders | undefined): boolean {
  return Object.keys(headers ?? {}).some((name) =>
    ['content-length', 'transfer-encoding'].includes(name.toLowerCase()),
  );
}
