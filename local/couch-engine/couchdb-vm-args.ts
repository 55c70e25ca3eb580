import { InvalidCouchEngineConfigError } from './errors.js';

/** How the Erlang node finds its own distribution port. */
export type EpmdMode =
  /**
   * OTP 23.1+: the node listens for no distribution (`-dist_listen false`), so it needs no epmd
   * to register with and none runs. Not `-erl_epmd_port <port>`: that setting is global, so every
   * outgoing connection to any node name dials that port; CouchDB 3.5 pings `clouseau@127.0.0.1`
   * on each Mango index validation, which then reached the node itself and stalled for
   * net_setuptime (7 s), timing out the query server and failing `POST /{db}/_index` with a 500.
   */
  | 'none'
  /** Older OTP: the node registers with the machine's one epmd, which outlives it. */
  | 'shared';

export interface CouchDbVmArgsInput {
  /** `settee-<random>`; kept with the data folder, because CouchDB's shard maps name the node. */
  nodeName: string;
  cookie: string;
  /** The Erlang distribution port, on 127.0.0.1 only (listened on in epmd mode 'shared' only). */
  distributionPort: number;
  epmd: EpmdMode;
  /** The install's etc/vm.args, kept for its tuning; the lines that name the node are replaced. */
  baseVmArgs?: string;
}

/** Used when the install has no etc/vm.args: what CouchDB 3.x's own file sets besides the name. */
export const FALLBACK_BASE_VM_ARGS = [
  '-kernel error_logger silent',
  '-sasl sasl_error_logger false',
  '+K true',
  '+A 16',
  '+Bd -noinput',
].join('\n');

/** Flags this builder owns: the base's own (a fixed name, a shared cookie, an ini chain) go. */
const REPLACED_FLAGS = [
  '-name',
  '-sname',
  '-setcookie',
  '-start_epmd',
  '-erl_epmd_port',
  '-dist_listen',
  '-couch_ini',
];
const REPLACED_KERNEL_PARAMS = ['inet_dist_listen_min', 'inet_dist_listen_max', 'inet_dist_use_interface'];
const NODE_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const COOKIE_PATTERN = /^[A-Za-z0-9]{16,255}$/;

/**
 * The vm.args of one instance, so that several run side by side: its own node name and cookie,
 * and distribution on one fixed loopback port, or no listening distribution where OTP allows it.
 */
export function buildCouchDbVmArgs(input: CouchDbVmArgsInput): string {
  if (!NODE_NAME_PATTERN.test(input.nodeName)) {
    throw new InvalidCouchEngineConfigError(
      `node name must match ${NODE_NAME_PATTERN}, got ${input.nodeName}`,
    );
  }
  if (!COOKIE_PATTERN.test(input.cookie)) {
    throw new InvalidCouchEngineConfigError(`the cookie must match ${COOKIE_PATTERN}`);
  }
  const port = input.distributionPort;
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new InvalidCouchEngineConfigError(`distribution port must be an integer in 1..65535, got ${port}`);
  }
  const kept = (input.baseVmArgs ?? FALLBACK_BASE_VM_ARGS).split('\n').filter((line) => !isReplaced(line));
  const noInput = kept.some((line) => !isComment(line) && /(^|\s)-noinput(\s|$)/.test(line));
  const own = [
    '# Settee (local/couch-engine): this instance among others on the same machine',
    `-name ${input.nodeName}@127.0.0.1`,
    `-setcookie ${input.cookie}`,
    '-kernel inet_dist_use_interface {127,0,0,1}',
    `-kernel inet_dist_listen_min ${port}`,
    `-kernel inet_dist_listen_max ${port}`,
    ...(input.epmd === 'none' ? ['-start_epmd false', '-dist_listen false'] : []),
    ...(noInput ? [] : ['+Bd -noinput']),
  ];
  return `${[...trimTrailingBlank(kept), '', ...own].join('\n')}\n`;
}

/**
 * Whether the install's Erlang runtime can run without epmd: a named node that neither listens
 * nor starts epmd works from OTP 23.1, whose runtime (ERTS) is 11.1. `startErlData` is releases/start_erl.data
 * ("<erts version> <couchdb version>"); anything unreadable means no.
 */
export function epmdModeFor(startErlData: string | undefined): EpmdMode {
  const match = /^\s*(\d+)\.(\d+)/.exec(startErlData ?? '');
  if (!match) return 'shared';
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major > 11 || (major === 11 && minor >= 1) ? 'none' : 'shared';
}

function isReplaced(line: string): boolean {
  const [flag, param] = line.trim().split(/\s+/);
  if (flag === undefined || isComment(line)) return false;
  return (
    REPLACED_FLAGS.includes(flag) || (flag === '-kernel' && REPLACED_KERNEL_PARAMS.includes(param ?? ''))
  );
}

function isComment(line: string): boolean {
  return line.trim().startsWith('#');
}

function trimTrailingBlank(lines: string[]): string[] {
  const result = [...lines];
  while (result.length > 0 && result[result.length - 1]?.trim() === '') result.pop();
  return result;
}
