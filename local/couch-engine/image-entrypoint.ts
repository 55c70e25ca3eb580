/**
 * What the official `couchdb:3.x` image does before it execs bin/couchdb (its
 * docker-entrypoint.sh, 3.x), as a pure function of the container's files and environment, so the
 * kubelet stand-in starts the release exactly as that image would start it:
 * - `local.d/docker.ini` is created (empty): CouchDB writes runtime configuration changes to the
 *   last ini file it reads, and that is this one;
 * - NODENAME adds `-name couchdb@$NODENAME` to vm.args unless vm.args already names a couchdb@ node
 *   (without it the node runs unnamed, `nonode@nohost`, with no distribution at all);
 * - COUCHDB_USER with COUCHDB_PASSWORD appends `[admins] user = password` to docker.ini unless a
 *   local.d file or local.ini already has `[admins]` followed at once by `user =`;
 * - COUCHDB_SECRET appends `[chttpd_auth] secret = ...` unless `[chttpd_auth]` is already followed
 *   at once by `secret =`;
 * - COUCHDB_ERLANG_COOKIE is the node's cookie file, unless one is there;
 * - with no `[admins]` section followed by a non-comment line in default.d, local.d or local.ini,
 *   the container exits 1 with the image's "no Admin Party" error.
 * ERL_FLAGS needs no step: erlexec reads it from the environment.
 */

/** Files as the container sees them, by path under /opt/couchdb/etc (`local.d/10-x.ini`, `vm.args`). */
export type EtcFiles = ReadonlyMap<string, string>;

export interface ImageEntrypointInput {
  /** The image's etc/ with the pod's mounts laid over it. */
  etc: EtcFiles;
  env: Readonly<Record<string, string>>;
}

export type ImageEntrypointResult =
  | { started: true; dockerIni: string; vmArgs: string; erlangCookie: string | undefined }
  | { started: false; exitCode: 1; message: string };

export const DOCKER_INI = 'local.d/docker.ini';

/** The image's error when no admin is configured (it will not run in Admin Party mode). */
export const NO_ADMIN_MESSAGE =
  'ERROR: CouchDB 3.0+ will no longer run in "Admin Party" mode. You *MUST* specify an admin user ' +
  'and password, either via your own .ini file mapped into the container at ' +
  '/opt/couchdb/etc/local.ini or inside /opt/couchdb/etc/local.d, or with ' +
  '"-e COUCHDB_USER=admin -e COUCHDB_PASSWORD=password" to set it via "docker run".';

export function applyImageEntrypoint(input: ImageEntrypointInput): ImageEntrypointResult {
  const { env } = input;
  const etc = new Map(input.etc);
  let dockerIni = etc.get(DOCKER_INI) ?? '';
  etc.set(DOCKER_INI, dockerIni);
  let vmArgs = etc.get('vm.args') ?? '';
  if (env.NODENAME && !vmArgs.includes('couchdb@')) {
    vmArgs = `${vmArgs}${vmArgs === '' || vmArgs.endsWith('\n') ? '' : '\n'}-name couchdb@${env.NODENAME}\n`;
  }
  const localFiles = (): string[] => [...filesIn(etc, 'local.d'), etc.get('local.ini') ?? ''];
  if (env.COUCHDB_USER && env.COUCHDB_PASSWORD) {
    const present = new RegExp(`\\[admins\\]\\n${escapeRegExp(env.COUCHDB_USER)} =`);
    if (!localFiles().some((text) => present.test(text))) {
      dockerIni += `\n[admins]\n${env.COUCHDB_USER} = ${env.COUCHDB_PASSWORD}\n`;
      etc.set(DOCKER_INI, dockerIni);
    }
  }
  if (env.COUCHDB_SECRET) {
    if (!localFiles().some((text) => /\[chttpd_auth\]\nsecret =/.test(text))) {
      dockerIni += `\n[chttpd_auth]\nsecret = ${env.COUCHDB_SECRET}\n`;
      etc.set(DOCKER_INI, dockerIni);
    }
  }
  const withAdmin = [...filesIn(etc, 'default.d'), ...localFiles()].some((text) =>
    /\[admins\]\n[^;]\w+/.test(text),
  );
  if (!withAdmin) return { started: false, exitCode: 1, message: NO_ADMIN_MESSAGE };
  return { started: true, dockerIni, vmArgs, erlangCookie: env.COUCHDB_ERLANG_COOKIE || undefined };
}

/** The `*.ini` files of one etc/ sub-folder, in the order CouchDB reads them (by name). */
export function iniFilesIn(etc: EtcFiles, folder: 'local.d' | 'default.d'): string[] {
  return [...etc.keys()].filter((file) => file.startsWith(`${folder}/`) && file.endsWith('.ini')).sort();
}

function filesIn(etc: EtcFiles, folder: 'local.d' | 'default.d'): string[] {
  return iniFilesIn(etc, folder).map((file) => etc.get(file) ?? '');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
