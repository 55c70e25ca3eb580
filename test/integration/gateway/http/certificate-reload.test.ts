import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import tls from 'node:tls';
import { loadGatewayConfig } from '../../../../gateway/config.js';
import { startServer, type ListeningServer } from '../../../../gateway/http/server.js';
import { UpstreamSockets } from '../../../../gateway/http/upstream-sockets.js';
import { generateControlPlanePki, type KeyPair } from '../../../../local/pki.js';
import { waitFor } from '../../../../local/wait.js';
import { createLogger } from '../../../../observability/logger.js';

/** The SHA-256 fingerprint of the certificate a fresh TLS connection to `port` is served. */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.end();
    });
    socket.on('error', reject);
  });
}

const fingerprintOf = (pair: KeyPair): string => new crypto.X509Certificate(pair.certPem).fingerprint256;

/**
 * A folder laid out as the kubelet lays out a Secret volume: the files are symlinks through
 * `..data` into a timestamped folder, and an update swaps `..data` in one rename.
 */
class SecretVolume {
  private generation = 0;
  constructor(readonly dir: string) {}

  static async create(pair: KeyPair): Promise<SecretVolume> {
    const volume = new SecretVolume(await fs.mkdtemp(path.join(os.tmpdir(), 'settee-gw-secret-')));
    await volume.update(pair);
    await fs.symlink('..data/tls.crt', path.join(volume.dir, 'tls.crt'));
    await fs.symlink('..data/tls.key', path.join(volume.dir, 'tls.key'));
    return volume;
  }

  async update(pair: KeyPair): Promise<void> {
    const version = `..version_${(this.generation += 1)}`;
    await fs.mkdir(path.join(this.dir, version));
    await fs.writeFile(path.join(this.dir, version, 'tls.crt'), pair.certPem);
    await fs.writeFile(path.join(this.dir, version, 'tls.key'), pair.keyPem);
    await fs.symlink(version, path.join(this.dir, '..data_tmp'));
    await fs.rename(path.join(this.dir, '..data_tmp'), path.join(this.dir, '..data'));
  }
}

/** What the listener answers an HTTPS request, read on a fresh TLS connection. */
function answerOverTls(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () =>
      socket.end('GET / HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n'),
    );
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('end', () => resolve(text.slice(text.indexOf('\r\n\r\n') + 4)));
    socket.on('error', reject);
  });
}

// With the fast path on, a tls server holds the certificate and hands decrypted connections (here
// every one: the decision takes none) to the node:http server.
describe.each([
  ['node:http alone', false],
  ['the fast path on', true],
])('the gateway listener reloads its TLS certificate when the files change (%s)', (_label, fastPath) => {
  let a: KeyPair;
  let b: KeyPair;
  let server: ListeningServer | undefined;
  let dir: string | undefined;
  let logged: string[];

  beforeAll(async () => {
    a = (await generateControlPlanePki()).apiserver;
    b = (await generateControlPlanePki()).apiserver;
  });

  afterEach(async () => {
    await server?.close(1_000);
    if (dir) await fs.rm(dir, { recursive: true, force: true });
    server = undefined;
    dir = undefined;
  });

  async function serve(files: { certFile: string; keyFile: string }): Promise<ListeningServer> {
    logged = [];
    const stream = new PassThrough();
    stream.on('data', (line: Buffer) => logged.push(line.toString()));
    server = await startServer({
      listener: (req, res) => res.end((req.socket as tls.TLSSocket).encrypted ? 'ok over TLS' : 'ok'),
      host: '127.0.0.1',
      port: 0,
      tls: files,
      clients: loadGatewayConfig({}).clients,
      fastPath: fastPath
        ? {
            decide: () => undefined,
            sockets: new UpstreamSockets({ maxConnectionsPerAddress: 1, idleTimeoutMs: 1_000 }),
            upstreamHeadersTimeoutMs: 1_000,
            retryAfterSeconds: 1,
          }
        : undefined,
      logger: createLogger({ level: 'info', component: 'gateway', stream }),
    });
    return server;
  }

  it('when the Secret volume swaps in certificate B, then a new TLS connection is served B within a few seconds', async () => {
    const volume = await SecretVolume.create(a);
    dir = volume.dir;
    const { port } = await serve({ certFile: path.join(dir, 'tls.crt'), keyFile: path.join(dir, 'tls.key') });
    expect(await servedFingerprint(port)).toBe(fingerprintOf(a));
    expect(await answerOverTls(port)).toBe('ok over TLS');

    await volume.update(b);
    await waitFor(
      'certificate B to be served',
      async () => ((await servedFingerprint(port)) === fingerprintOf(b) ? true : undefined),
      { timeoutMs: 5_000 },
    );
    expect(logged.some((line) => line.includes('TLS certificate reloaded'))).toBe(true);
  });

  it('when the files are replaced by a pair that does not load, then A stays in service until a good pair comes', async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-gw-tls-'));
    const files = { certFile: path.join(dir, 'tls.crt'), keyFile: path.join(dir, 'tls.key') };
    await fs.writeFile(files.certFile, a.certPem);
    await fs.writeFile(files.keyFile, a.keyPem);
    const { port } = await serve(files);

    // B's certificate with A's key: a pair that does not match, as a half-finished manual update leaves it.
    await fs.writeFile(files.certFile, b.certPem);
    const failure = await waitFor(
      'the failed reload to be logged',
      async () => logged.find((line) => line.includes('TLS certificate reload failed')),
      { timeoutMs: 5_000 },
    );
    expect(JSON.parse(failure)).toMatchObject({ level: 'warn', certFile: files.certFile });
    expect(failure).not.toContain('PRIVATE KEY');
    expect(await servedFingerprint(port)).toBe(fingerprintOf(a));

    await fs.writeFile(files.keyFile, b.keyPem);
    await waitFor(
      'certificate B to be served',
      async () => ((await servedFingerprint(port)) === fingerprintOf(b) ? true : undefined),
      { timeoutMs: 5_000 },
    );
  });
});
