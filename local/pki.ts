import crypto from 'node:crypto';
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
  /** Signs and verifies service account tokens. */
  serviceAccount: { publicKeyPem: string; privateKeyPem: string };
}

const VALIDITY_DAYS = 7;

// node-forge signs certificates but its key generation is slow pure JS; Node generates the RSA keys.
function generateRsaKey(): { publicKeyPem: string; privateKeyPem: string } {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
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

function issue(request: CertificateRequest): KeyPair & { cert: forge.pki.Certificate } {
  const key = generateRsaKey();
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
export function generateControlPlanePki(): ControlPlanePki {
  const ca = issue({
    subject: [{ name: 'commonName', value: 'settee-local-ca' }],
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const issuer = { cert: ca.cert, keyPem: ca.keyPem };
  const apiserver = issue({
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
  });
  const admin = issue({
    subject: [
      { name: 'commonName', value: 'settee-admin' },
      { name: 'organizationName', value: 'system:masters' },
    ],
    issuer,
    extensions: [
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', clientAuth: true },
    ],
  });
  return {
    ca: { certPem: ca.certPem, keyPem: ca.keyPem },
    apiserver: { certPem: apiserver.certPem, keyPem: apiserver.keyPem },
    admin: { certPem: admin.certPem, keyPem: admin.keyPem },
    serviceAccount: generateRsaKey(),
  };
}
