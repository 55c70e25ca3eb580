import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadOrGeneratePki } from '../../../local/persisted-pki.js';

const DAY_MS = 86_400_000;

describe('loadOrGeneratePki', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-pki-test-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('when the folder holds none, then a PKI is generated and stored readable only by its owner; the next start reuses it as is', async () => {
    const first = await loadOrGeneratePki(dir);
    expect(first).toMatchObject({ source: 'generated' });
    expect(first.reason).toBeUndefined();
    expect((await fs.stat(path.join(dir, 'pki.json'))).mode & 0o777).toBe(0o600);
    const second = await loadOrGeneratePki(dir);
    expect(second.source).toBe('reused');
    expect(second.pki).toEqual(first.pki);
  });

  it('when the stored certificates expire within a day, then new ones replace them and the reason says which', async () => {
    const first = await loadOrGeneratePki(dir);
    const validTo = Date.parse(new crypto.X509Certificate(first.pki.ca.certPem).validTo);
    const later = await loadOrGeneratePki(dir, validTo - DAY_MS / 2);
    expect(later).toMatchObject({
      source: 'generated',
      reason: expect.stringMatching(/^the ca certificate expires /),
    });
    expect(later.pki.ca.certPem).not.toBe(first.pki.ca.certPem);
    // Stored: the next start reuses the new ones.
    expect((await loadOrGeneratePki(dir)).pki).toEqual(later.pki);
  });

  it('when the stored file is not JSON, or a certificate is not issued by the stored CA, then it is replaced and the reason says why', async () => {
    await fs.writeFile(path.join(dir, 'pki.json'), '{ half a file');
    expect(await loadOrGeneratePki(dir)).toMatchObject({
      source: 'generated',
      reason: 'pki.json is not JSON',
    });

    const stored = JSON.parse(await fs.readFile(path.join(dir, 'pki.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    const other = await loadOrGeneratePki(await fs.mkdtemp(path.join(dir, 'other-')));
    await fs.writeFile(path.join(dir, 'pki.json'), JSON.stringify({ ...stored, admin: other.pki.admin }));
    expect(await loadOrGeneratePki(dir)).toMatchObject({
      source: 'generated',
      reason: 'the admin certificate was not issued by the stored CA',
    });

    await fs.writeFile(path.join(dir, 'pki.json'), JSON.stringify({ ...stored, serviceAccount: {} }));
    expect(await loadOrGeneratePki(dir)).toMatchObject({
      source: 'generated',
      reason: 'the service-account key is incomplete',
    });
  });
});
