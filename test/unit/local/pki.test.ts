import crypto from 'node:crypto';
import { generateControlPlanePki, type ControlPlanePki } from '../../../local/pki.js';

// Signing is node-forge's pure JS RSA: about a second alone, over jest's 10 s on a loaded 2-core CI.
const PKI_TIMEOUT_MS = 60_000;

describe('generateControlPlanePki', () => {
  let pki: ControlPlanePki;
  let ca: crypto.X509Certificate;
  beforeAll(async () => {
    pki = await generateControlPlanePki();
    ca = new crypto.X509Certificate(pki.ca.certPem);
  }, PKI_TIMEOUT_MS);

  it('when generated, then the serving and client certificates are signed by the fresh CA', () => {
    expect(ca.ca).toBe(true);
    for (const pair of [pki.apiserver, pki.admin, pki.controllerManager, pki.scheduler]) {
      expect(new crypto.X509Certificate(pair.certPem).verify(ca.publicKey)).toBe(true);
    }
  });

  it('when generated, then the serving certificate is valid for 127.0.0.1 and localhost', () => {
    const serving = new crypto.X509Certificate(pki.apiserver.certPem);
    expect(serving.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(serving.checkHost('localhost')).toBe('localhost');
  });

  it('when generated, then the admin identity belongs to system:masters', () => {
    expect(new crypto.X509Certificate(pki.admin.certPem).subject).toContain('O=system:masters');
  });

  it('when generated, then the controller manager and the scheduler carry the names their bootstrap RBAC binds', () => {
    expect(new crypto.X509Certificate(pki.controllerManager.certPem).subject).toBe(
      'CN=system:kube-controller-manager',
    );
    expect(new crypto.X509Certificate(pki.scheduler.certPem).subject).toBe('CN=system:kube-scheduler');
  });

  it(
    'when generated twice, then the CAs differ',
    async () => {
      expect((await generateControlPlanePki()).ca.certPem).not.toBe(pki.ca.certPem);
    },
    PKI_TIMEOUT_MS,
  );
});
