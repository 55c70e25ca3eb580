import crypto from 'node:crypto';
import type { ObjectKey } from '../../../kube/controller-runtime/object-key.js';
import {
  adminPasswordSalt,
  computeAdminPasswordHash,
  type AdminHashScheme,
} from '../../resources/couch-instance/admin-password-hash.js';

/**
 * Remembers each instance's admin hash. pbkdf2 is slow on purpose (tens of milliseconds), and the
 * ConfigMap is rebuilt on every reconcile; the hash only changes with the password, the instance
 * UID or the scheme, which a fingerprint of the three detects.
 */
export class AdminHashCache {
  private readonly entries = new Map<ObjectKey, { fingerprint: string; hash: Promise<string> }>();

  hashFor(
    key: ObjectKey,
    input: { password: string; instanceUid: string; scheme: AdminHashScheme },
  ): Promise<string> {
    const fingerprint = crypto
      .createHash('sha256')
      .update(JSON.stringify([input.password, input.instanceUid, input.scheme]))
      .digest('hex');
    const cached = this.entries.get(key);
    if (cached?.fingerprint === fingerprint) return cached.hash;
    const hash = computeAdminPasswordHash({
      password: input.password,
      salt: adminPasswordSalt(input.instanceUid),
      scheme: input.scheme,
    });
    this.entries.set(key, { fingerprint, hash });
    hash.catch(() => this.entries.delete(key));
    return hash;
  }

  forget(key: ObjectKey): void {
    this.entries.delete(key);
  }
}
