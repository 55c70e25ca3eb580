import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { InvalidCouchEngineConfigError } from './errors.js';

/** What must stay the same across restarts on one data folder, whichever engine runs it. */
export interface EngineIdentity {
  /** The server uuid of GET / (CouchDB keeps it in its ini; replication checkpoints depend on it). */
  uuid: string;
  /** The cookie-signing secret, so AuthSession cookies outlive a restart as they do on CouchDB. */
  secret: string;
}

/** Kept beside the databases; CouchDB database names start with a letter, so it never clashes. */
export const ENGINE_IDENTITY_FILE = '.settee-engine-identity.json';

const UUID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Reads the identity kept in `dataDir`, creating it on first use. A `uuid` given by the caller
 * wins over the kept one and is kept from then on. Synchronous: the stand-in engine's start reads
 * it on the wake path, and one small local file is read sooner than the four thread-pool round
 * trips of an asynchronous read (open, stat, read, close) are handed back on a loaded machine; the
 * real engine's start does its file work so too (apache-couchdb-engine.ts, docs/cold-start.md).
 */
export function loadEngineIdentity(dataDir: string, uuid?: string): EngineIdentity {
  if (uuid !== undefined && !UUID_PATTERN.test(uuid)) {
    throw new InvalidCouchEngineConfigError(`uuid must match ${UUID_PATTERN}, got ${JSON.stringify(uuid)}`);
  }
  const file = path.join(dataDir, ENGINE_IDENTITY_FILE);
  const kept = readIdentity(file);
  const identity: EngineIdentity = {
    uuid: uuid ?? kept?.uuid ?? randomBytes(16).toString('hex'),
    secret: kept?.secret ?? randomBytes(32).toString('hex'),
  };
  const changed = (Object.keys(identity) as Array<keyof EngineIdentity>).some(
    (k) => identity[k] !== kept?.[k],
  );
  if (changed) {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(file, `${JSON.stringify(identity, null, 2)}\n`, { mode: 0o600 });
  }
  return identity;
}

function readIdentity(file: string): EngineIdentity | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const parsed = JSON.parse(text) as Partial<EngineIdentity>;
  const valid =
    typeof parsed.uuid === 'string' && UUID_PATTERN.test(parsed.uuid) && typeof parsed.secret === 'string';
  if (!valid) throw new InvalidCouchEngineConfigError(`${file} is not a valid engine identity`);
  return { uuid: parsed.uuid as string, secret: parsed.secret as string };
}
