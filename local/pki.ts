import crypto from 'node:crypto';
import { promisify } from 'node:util';
import forge from 'node-forge';

/** A PEM certificate and its private key. */
export interface KeyPair {
  certPem: string;
  keyPem: string;
}

export interface ControlPlanePki {
  ca: KeyPair;
  /** kube-apiserver's serving certificate, valid for localhost and 127.0.0.1. */
  apiserver: KeyPair;
  /** The admin identity (O=system:masters) that the kubeconfig carries. */
  admin: KeyPair;
  /** system:kube-controller-manager, whose bootstrap RBAC lets it mint each controller's token. */
  controllerManager: KeyPair;
  /** system:kube-scheduler, as its bootstrap ClusterRole names it. */
  scheduler: KeyPair;
  /** Signs and verifies service account tokens. */
  serviceAccount: { publicKeyPem: string; privateKeyPem: string };
}

const VALIDITY_DAYS = 7;

interface RsaKey {
  publicKeyPem: string;
  privateKeyPem: string;
}

const generateKeyPair = promisify(crypto.generateKeyPair);

// node-forge signs certificates but its key generation is slow pure JS; Node generates the RSA
// keys, off the event loop and side by side (the control plane starts etcd meanwhile).
async function generateRsaKey(): Promise<RsaKey> {
  const { publicKey, privateKey } = await generateKeyPair('rsa', { modulusLength: 2048 });
  return {
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privateKeyPem: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
  };
}

interface CertificateRequest {
  subject: forge.pki.CertificateField[];
  issuer?: { cert: forge.pki.Certificate; keyPem: string };
  extensions: object[];
}

function issue(request: CertificateRequest, key: RsaKey): KeyPair & { cert: forge.pki.Certificate } {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(key.publicKeyPem);
  cert.serialNumber = '01' + crypto.randomBytes(15).toString('hex');
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + VALIDITY_DAYS * 86_400_000);
  cert.setSubject(request.subject);
  cert.setIssuer(request.issuer ? request.issuer.cert.subject.attributes : request.subject);
  cert.setExtensions(request.extensions);
  const signingKey = forge.pki.privateKeyFromPem(request.issuer?.keyPem ?? key.privateKeyPem);
  cert.sign(signingKey, forge.md.sha256.create());
  return { cert, certPem: forge.pki.certificateToPem(cert), keyPem: key.privateKeyPem };
}

/** Generates a fresh CA and the certificates one embedded control plane needs. */
export async function generateControlPlanePki(): Promise<ControlPlanePki> {
  const [caKey, apiserverKey, adminKey, controllerManagerKey, schedulerKey, serviceAccount] =
    await Promise.all([
      generateRsaKey(),
      generateRsaKey(),
      generateRsaKey(),
      generateRsaKey(),
      generateRsaKey(),
      generateRsaKey(),
    ]);
  const ca = issue(
    {
      subject: [{ name: 'commonName', value: 'settee-local-ca' }],
      extensions: [
        { name: 'basicConstraints', cA: true, critical: true },
        { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      ],
    },
    caKey,
  );
  const issuer = { cert: ca.cert, keyPem: ca.keyPem };
  const apiserver = issue(
    {
      subject: [{ name: 'commonName', value: 'kube-apiserver' }],
      issuer,
      extensions: [
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 2, value: 'kubernetes.default.svc' },
            { type: 7, ip: '127.0.0.1' },
          ],
        },
      ],
    },
    apiserverKey,
  );
  const client = (key: RsaKey, commonName: string, organization?: string): KeyPair => {
    const pair = issue(
      {
        subject: [
          { name: 'commonName', value: commonName },
          ...(organization ? [{ name: 'organizationName', value: organization }] : []),
        ],
        issuer,
        extensions: [
          { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
          { name: 'extKeyUsage', clientAuth: true },
        ],
      },
      key,
    );
    return { certPem: pair.certPem, keyPem: pair.keyPem };
  };
  return {
    ca: { certPem: ca.certPem, keyPem: ca.keyPem },
    apiserver: { certPem: apiserver.certPem, keyPem: apiserver.keyPem },
    admin: client(adminKey, 'settee-admin', 'system:masters'),
    controllerManager: client(controllerManagerKey, 'system:kube-controller-manager'),
    scheduler: client(schedulerKey, 'system:kube-scheduler'),
    serviceAccount,
  };
}
