import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'winston';
import { SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import { COUCH_BACKUP_PLURAL, type CouchBackup } from '../../../api/couch-backup.js';
import type { CouchInstance } from '../../../api/couch-instance.js';
import { podAddress } from '../../../api/pod-address.js';
import type { KubeClients } from '../../../kube/clients.js';
import { callKube, isAlreadyExists } from '../../../kube/errors.js';
import type { Informer } from '../../../kube/informer.js';
import { errorMessage } from '../../../observability/logger.js';
import { CouchReader } from '../../backup/couch-reader.js';
import { readDataFingerprint } from '../../backup/run-backup.js';
import { buildCouchBackup } from '../../resources/couch-backup/couch-backup.js';

export type FinalBackupGate =
  /** Nothing (more) to back up: hibernate. */
  | { hold: false }
  /** A final backup is being taken: stay up until it ends (its completion reconciles the instance). */
  | { hold: true; backup: string };

const PROCEED: FinalBackupGate = { hold: false };
const FINISHED = new Set(['Completed', 'Failed', 'Skipped']);

function time(value: string | Date | undefined): number {
  if (value === undefined) return 0;
  return (value instanceof Date ? value : new Date(value)).getTime() || 0;
}

/**
 * The last step before an idle instance with the backups add-on is scaled to zero: it is not woken
 * for backups while hibernated, so whatever changed since its last completed backup is backed up
 * now. "Changed" is the data fingerprint (every database's update sequence) against the newest
 * completed backup's. The instance hibernates once the final backup ends, whether it completed or
 * failed (the failure stays on the CouchBackup), and at once when the instance cannot be asked:
 * a broken check must never keep an instance up.
 */
export class FinalBackup {
  constructor(
    private readonly options: {
      backups: Informer<CouchBackup>;
      clients: KubeClients;
      requestTimeoutMs: number;
      now: () => Date;
    },
  ) {}

  async gate(check: {
    instance: CouchInstance;
    pod: V1Pod | undefined;
    credentials: { username: string; password: string };
    /** The activity the idle decision counted from: a final backup made after it still stands. */
    lastActivityTime: string | undefined;
    logger: Logger;
    signal: AbortSignal;
  }): Promise<FinalBackupGate> {
    const { instance, logger } = check;
    if (instance.spec.plan !== 'paid' || !instance.spec.addons?.backups) return PROCEED;
    const mine = this.options.backups
      .list(instance.metadata.namespace)
      .filter((backup) => backup.spec.instance === instance.metadata.name);
    const finals = mine.filter((backup) => backup.spec.trigger === 'Hibernation');
    const inFlight = finals.find((backup) => !FINISHED.has(backup.status?.phase ?? ''));
    if (inFlight) return { hold: true, backup: inFlight.metadata.name ?? '' };
    const idleSince = time(check.lastActivityTime);
    if (finals.some((backup) => time(backup.metadata.creationTimestamp) >= idleSince && idleSince > 0))
      return PROCEED;
    const address = check.pod && podAddress(check.pod);
    if (!address) return PROCEED;
    let fingerprint: string;
    try {
      fingerprint = await readDataFingerprint(
        new CouchReader({
          origin: address.origin,
          credentials: check.credentials,
          timeoutMs: this.options.requestTimeoutMs,
          signal: check.signal,
        }),
      );
    } catch (err) {
      if (check.signal.aborted) throw err;
      logger.warn(
        'could not read the data fingerprint before hibernating; hibernating without a final backup',
        {
          error: errorMessage(err),
        },
      );
      return PROCEED;
    }
    const newestGood = mine
      .filter((backup) => backup.status?.phase === 'Completed')
      .sort((a, b) => time(b.status?.completedAt) - time(a.status?.completedAt))[0];
    if (newestGood?.status?.dataFingerprint === fingerprint) return PROCEED;
    const backup = buildCouchBackup({ instance, trigger: 'Hibernation', time: this.options.now() });
    try {
      await callKube(() =>
        this.options.clients.customObjects.createNamespacedCustomObject({
          group: SETTEE_GROUP,
          version: SETTEE_VERSION,
          plural: COUCH_BACKUP_PLURAL,
          namespace: instance.metadata.namespace ?? '',
          body: backup,
        }),
      );
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    logger.info('data changed since the last backup: taking a final backup before hibernating', {
      backup: backup.metadata.name,
    });
    return { hold: true, backup: backup.metadata.name ?? '' };
  }
}
