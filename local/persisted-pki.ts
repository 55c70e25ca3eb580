import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { generateControlPlanePki, type ControlPlanePki, type KeyPair } from './pki.js';

/**
 * The control plane's certificates and service-account keys kept in a folder beside etcd's data
 * (make run: .settee/local/pki), so that a restart brings back not only the cluster's objects but
 * the identities they were made with: ServiceAccount tokens minted by an earlier run (a tenant's
 * token, a kubeconfig handed out) still authenticate, and the CA every kubeconfig trusts stays.
 */

const PKI_FILE = 'pki.json';
/** Reused only while every certificate stays valid this much longer: a `make run` may last a day. */
export const MIN_REMAINING_VALIDITY_MS = 86_400_000;

export interface LoadedPki {
  pki: ControlPlanePki;
  /** `reused` from the folder, or `generated` afresh (with why, when a stored one was refused). */
  source: 'reused' | 'generated';
  reason?: string;
}

const CERTIFICATES = ['ca', 'apiserver', 'admin', 'controllerManager', 'scheduler'] as const;

class StoredPkiRefusedError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'StoredPkiRefusedError';
  }
}

const isText = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

function keyPairOf(value: unknown, name: string): KeyPair {
  const pair = value as Partial<KeyPair> | undefined;
  if (!isText(pair?.certPem) || !isText(pair.keyPem))
    throw new StoredPkiRefusedError(`${name} is incomplete`);
  return { certPem: pair.certPem, keyPem: pair.keyPem };
}

/** The stored PKI when it is whole, issued by its CA, and valid long enough; else why not. */
function checkStored(text: string, now: number): ControlPlanePki {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new StoredPkiRefusedError(`${PKI_FILE} is not JSON`);
  }
  const pairs = Object.fromEntries(
    CERTIFICATES.map((name) => [name, keyPairOf(parsed[name], name)]),
  ) as Record<(typeof CERTIFICATES)[number], KeyPair>;
  const serviceAccount = parsed.serviceAccount as ControlPlanePki['serviceAccount'] | undefined;
  if (!isText(serviceAccount?.publicKeyPem) || !isText(serviceAccount.privateKeyPem))
    throw new StoredPkiRefusedError('the service-account key is incomplete');
  let ca: crypto.X509Certificate;
  try {
    ca = new crypto.X509Certificate(pairs.ca.certPem);
    for (const name of CERTIFICATES) {
      const cert = new crypto.X509Certificate(pairs[name].certPem);
      if (name !== 'ca' && !cert.verify(ca.publicKey))
        throw new StoredPkiRefusedError(`the ${name} certificate was not issued by the stored CA`);
      if (Date.parse(cert.validTo) - now < MIN_REMAINING_VALIDITY_MS)
        throw new StoredPkiRefusedError(`the ${name} certificate expires ${cert.validTo}`);
    }
  } catch (err) {
    if (err instanceof StoredPkiRefusedError) throw err;
    throw new StoredPkiRefusedError(`a certificate cannot be read: ${(err as Error).message}`);
  }
  return {
    ...pairs,
    serviceAccount: {
      publicKeyPem: serviceAccount.publicKeyPem,
      privateKeyPem: serviceAccount.privateKeyPem,
    },
  };
}

/**
 * The PKI stored in `dir` when it is usable, else a fresh one, stored there (mode 0600) for the
 * next start. A refused one is replaced, never repaired: its reason goes to the caller's log.
 */
export async function loadOrGeneratePki(dir: string, now = Date.now()): Promise<LoadedPki> {
  const file = path.join(dir, PKI_FILE);
  let reason: string | undefined;
  try {
    return { pki: checkStored(await fs.readFile(file, 'utf8'), now), source: 'reused' };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') reason = err instanceof StoredPkiRefusedError ? err.message : String(err);
  }
  const pki = await generateControlPlanePki();
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  // Written whole or not at all: a start killed mid-write must not leave half a file.
  const partial = `${file}.${process.pid}.tmp`;
  await fs.writeFile(partial, JSON.stringify(pki), { mode: 0o600 });
  await fs.rename(partial, file);
  return { pki, source: 'generated', ...(reason ? { reason } : {}) };
}
