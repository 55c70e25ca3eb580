import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
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
 * wins over the kept one and is kept from then on.
 */
export async function loadEngineIdentity(dataDir: string, uuid?: string): Promise<EngineIdentity> {
  if (uuid !== undefined && !UUID_PATTERN.test(uuid)) {
    throw new InvalidCouchEngineConfigError(`uuid must match ${UUID_PATTERN}, got ${JSON.stringify(uuid)}`);
  }
  const file = path.join(dataDir, ENGINE_IDENTITY_FILE);
  const kept = await readIdentity(file);
  const identity: EngineIdentity = {
    uuid: uuid ?? kept?.uuid ?? randomBytes(16).toString('hex'),
    secret: kept?.secret ?? randomBytes(32).toString('hex'),
  };
  const changed = (Object.keys(identity) as Array<keyof EngineIdentity>).some(
    (k) => identity[k] !== kept?.[k],
  );
  if (changed) {
    await fs.mkdir(dataDir, { recursive: true });
    await fs.writeFile(file, `${JSON.stringify(identity, null, 2)}\n`, { mode: 0o600 });
  }
  return identity;
}

async function readIdentity(file: string): Promise<EngineIdentity | undefined> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
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
