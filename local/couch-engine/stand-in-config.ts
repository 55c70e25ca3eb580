import type { CouchEngineAdmin } from './types.js';

/**
 * The environment variable that hands the pouchdb-server stand-in its settings, as JSON. The
 * environment rather than the command line, so the admin password does not show in `ps`.
 */
export const STAND_IN_CONFIG_ENV = 'SETTEE_POUCHDB_STAND_IN_CONFIG';

/** The CouchDB version the stand-in's GET / reports: the 3.x release whose API it is checked against. */
export const STAND_IN_REPORTED_COUCHDB_VERSION = '3.3.3';

/** The stand-in's GET / vendor name: it says what answers, so nobody mistakes it for CouchDB. */
export const STAND_IN_VENDOR_NAME = 'Settee stand-in: pouchdb-server (express-pouchdb), not Apache CouchDB';

export interface StandInConfig {
  /** The loopback address it listens on. */
  host: string;
  port: number;
  /** Absolute; each database is a LevelDB folder in it. */
  dataDir: string;
  admin: CouchEngineAdmin;
  uuid: string;
  /** Signs AuthSession cookies. */
  secret: string;
  /** Absolute; the Fauxton release served at /_utils (see fauxton-release.ts). */
  fauxtonDir: string;
}

export function parseStandInConfig(json: string | undefined): StandInConfig {
  if (!json) throw new Error(`${STAND_IN_CONFIG_ENV} is not set`);
  const value = JSON.parse(json) as Partial<StandInConfig>;
  const strings = [
    value.host,
    value.dataDir,
    value.admin?.username,
    value.admin?.password,
    value.uuid,
    value.secret,
    value.fauxtonDir,
  ];
  const valid =
    Number.isInteger(value.port) &&
    (value.port as number) > 0 &&
    strings.every((s) => typeof s === 'string' && s.length > 0);
  if (!valid)
    throw new Error(
      `${STAND_IN_CONFIG_ENV} is incomplete: it needs host, port, dataDir, admin, uuid, secret, fauxtonDir`,
    );
  return value as StandInConfig;
}
