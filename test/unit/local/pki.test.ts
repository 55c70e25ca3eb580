import crypto from 'node:crypto';
import { generateControlPlanePki } from '../../../local/pki.js';

describe('generateControlPlanePki', () => {
  const pki = generateControlPlanePki();
  const ca = new crypto.X509Certificate(pki.ca.certPem);

  it('when generated, then the serving and admin certificates are signed by the fresh CA', () => {
    expect(ca.ca).toBe(true);
    expect(new crypto.X509Certificate(pki.apiserver.certPem).verify(ca.publicKey)).toBe(true);
    expect(new crypto.X509Certificate(pki.admin.certPem).verify(ca.publicKey)).toBe(true);
  });

  it('when generated, then the serving certificate is valid for 127.0.0.1 and localhost', () => {
    const serving = new crypto.X509Certificate(pki.apiserver.certPem);
    expect(serving.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(serving.checkHost('localhost')).toBe('localhost');
  });

  it('when generated, then the admin identity belongs to system:masters', () => {
    expect(new crypto.X509Certificate(pki.admin.certPem).subject).toContain('O=system:masters');
  });

  it('when generated twice, then the CAs differ', () => {
    expect(generateControlPlanePki().ca.certPem).not.toBe(pki.ca.certPem);
  });
});
