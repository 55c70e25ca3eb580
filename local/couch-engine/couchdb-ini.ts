import { InvalidCouchEngineConfigError } from './errors.js';
import type { CouchEngineAdmin } from './types.js';

/** One Apache CouchDB 3.x instance's own settings, layered over the install's default.ini. */
export interface CouchDbIniInput {
  /** chttpd's loopback address (default 127.0.0.1). */
  host?: string;
  /** chttpd's port, bound on `host` only. */
  port: number;
  /** Absolute; holds the databases and the view indexes. */
  dataDir: string;
  /** Absolute; a folder of this run's own (CouchDB writes couch.uri there). */
  runDir: string;
  uuid: string;
  admin: CouchEngineAdmin;
  /** Signs AuthSession cookies. */
  secret: string;
  /** Default: notice. */
  logLevel?: 'debug' | 'info' | 'notice' | 'warning' | 'error';
}

type IniSection = [name: string, entries: Array<[key: string, value: string]>];

/**
 * The ini file of one instance: its port and data folder, a single node with one copy of each
 * shard, its uuid and cookie secret, and its server admin (CouchDB hashes the password in place at
 * startup). Logs go to stderr, where startProcess collects them.
 */
export function buildCouchDbIni(input: CouchDbIniInput): string {
  assertPort(input.port);
  assertLoopback(input.host ?? '127.0.0.1');
  const sections: IniSection[] = [
    [
      'couchdb',
      [
        ['database_dir', input.dataDir],
        ['view_index_dir', input.dataDir],
        ['uri_file', `${input.runDir}/couch.uri`],
        ['uuid', input.uuid],
        ['single_node', 'true'],
      ],
    ],
    ['cluster', [['n', '1']]],
    [
      'chttpd',
      [
        ['port', String(input.port)],
        ['bind_address', input.host ?? '127.0.0.1'],
      ],
    ],
    ['admins', [[input.admin.username, input.admin.password]]],
    ['chttpd_auth', [['secret', input.secret]]],
    // CouchDB 3.0 and 3.1 read the secret from here; later releases fall back to it.
    ['couch_httpd_auth', [['secret', input.secret]]],
    [
      'log',
      [
        ['writer', 'stderr'],
        ['level', input.logLevel ?? 'notice'],
      ],
    ],
  ];
  const header = '; Written by Settee (local/couch-engine) for one instance; removed when it stops.\n';
  return header + sections.map(formatSection).join('\n');
}

/**
 * COUCHDB_INI_FILES: the files (or *.d folders) in the order CouchDB layers them. bin/couchdb (3.0+)
 * hands it unquoted to `-couch_ini`, so spaces separate the paths and no path may contain one.
 */
export function buildCouchDbIniFilesEnv(files: string[]): string {
  for (const file of files) {
    if (/\s/.test(file) || file === '') {
      throw new InvalidCouchEngineConfigError(
        `COUCHDB_INI_FILES separates files by spaces, so ${JSON.stringify(file)} cannot be listed`,
      );
    }
  }
  return files.join(' ');
}

function formatSection([name, entries]: IniSection): string {
  const lines = entries.map(([key, value]) => `${checkKey(name, key)} = ${checkValue(name, key, value)}`);
  return `[${name}]\n${lines.join('\n')}\n`;
}

// CouchDB splits a line at " = " and ends a value at whitespace followed by ";" (an inline comment),
// trimming both sides: anything that would be cut or reshaped that way is refused, not mangled.
function checkKey(section: string, key: string): string {
  if (!/^[^\s=[\];]+$/.test(key)) {
    throw new InvalidCouchEngineConfigError(
      `[${section}] key ${JSON.stringify(key)} cannot be written to an ini file`,
    );
  }
  return key;
}

function checkValue(section: string, key: string, value: string): string {
  const unsafe = value === '' || /[\r\n]/.test(value) || value !== value.trim() || /^;|\s;/.test(value);
  if (unsafe) {
    // The value is left out of the message: it may be a password.
    throw new InvalidCouchEngineConfigError(
      `[${section}] ${key}: the value cannot be written to an ini file (empty, a line break, ` +
        'surrounding whitespace, or a ";" that CouchDB would read as a comment)',
    );
  }
  return value;
}

function assertLoopback(host: string): void {
  if (
    !/^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.test(host) ||
    host.split('.').some((part) => Number(part) > 255)
  ) {
    throw new InvalidCouchEngineConfigError(`the engine listens on loopback only (127.0.0.0/8), got ${host}`);
  }
}

function assertPort(port: number): void {
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new InvalidCouchEngineConfigError(`port must be an integer in 1..65535, got ${port}`);
  }
}
