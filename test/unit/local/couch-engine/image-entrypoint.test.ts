import {
  applyImageEntrypoint,
  DOCKER_INI,
  iniFilesIn,
  NO_ADMIN_MESSAGE,
} from '../../../../local/couch-engine/image-entrypoint.js';
import { buildImageEtc, imageVmArgs, runtimeIni } from '../../../../local/couch-engine/image-layout.js';

const RELEASE_VM_ARGS =
  '# the node\n-name couchdb@127.0.0.1\n+P 1048576\n#+sbwt none\n#+sbwtdcpu none\n#+sbwtdio none\n+Bd -noinput\n';
const OPERATOR_INI = '[couchdb]\nuuid = abc\n\n[admins]\nadmin = -pbkdf2:sha256-00,11,50000\n';

const etcWith = (mounted: Array<[string, string]>) =>
  buildImageEtc({
    releaseLocalIni: '[admins]\n;admin = mysecretpassword\n',
    releaseVmArgs: RELEASE_VM_ARGS,
    mounted: new Map(mounted),
  });

describe("the official image's etc/ and entrypoint", () => {
  it('when the release vm.args names a node, then the image one names none and turns busy waiting off', () => {
    const args = imageVmArgs(RELEASE_VM_ARGS);
    expect(args).not.toMatch(/-name/);
    expect(args.split('\n')).toEqual(
      expect.arrayContaining(['+sbwt none', '+sbwtdcpu none', '+sbwtdio none', '+P 1048576']),
    );
  });

  it("when the pod mounts the operator's ini, then the entrypoint starts CouchDB with an empty docker.ini and no node name", () => {
    const result = applyImageEntrypoint({ etc: etcWith([['local.d/10-settee.ini', OPERATOR_INI]]), env: {} });
    expect(result).toEqual({
      started: true,
      dockerIni: '',
      vmArgs: imageVmArgs(RELEASE_VM_ARGS),
      erlangCookie: undefined,
    });
  });

  it('when no admin is configured anywhere, then the container exits 1 with the image message', () => {
    const result = applyImageEntrypoint({
      etc: etcWith([['local.d/10-settee.ini', '[couchdb]\nuuid = abc\n']]),
      env: {},
    });
    expect(result).toEqual({ started: false, exitCode: 1, message: NO_ADMIN_MESSAGE });
  });

  it('when COUCHDB_USER and COUCHDB_PASSWORD are set and no ini has that admin, then docker.ini gets it, and the secret too', () => {
    const result = applyImageEntrypoint({
      etc: etcWith([]),
      env: { COUCHDB_USER: 'root', COUCHDB_PASSWORD: 'pw', COUCHDB_SECRET: 's3' },
    });
    expect(result).toMatchObject({
      started: true,
      dockerIni: '\n[admins]\nroot = pw\n\n[chttpd_auth]\nsecret = s3\n',
    });
  });

  it('when a local.d file already has that admin and a secret, then the environment adds nothing', () => {
    const ini = `${OPERATOR_INI}\n[chttpd_auth]\nsecret = kept\n`;
    const result = applyImageEntrypoint({
      etc: etcWith([['local.d/10-settee.ini', ini]]),
      env: { COUCHDB_USER: 'admin', COUCHDB_PASSWORD: 'other', COUCHDB_SECRET: 'other' },
    });
    expect(result).toMatchObject({ started: true, dockerIni: '' });
  });

  it('when NODENAME is set, then vm.args names couchdb@NODENAME, and COUCHDB_ERLANG_COOKIE is the cookie', () => {
    const result = applyImageEntrypoint({
      etc: etcWith([['local.d/a.ini', OPERATOR_INI]]),
      env: { NODENAME: 'db-0.db.ns.svc', COUCHDB_ERLANG_COOKIE: 'monster' },
    });
    expect(result).toMatchObject({ started: true, erlangCookie: 'monster' });
    expect(result.started && result.vmArgs.trimEnd().split('\n').pop()).toBe('-name couchdb@db-0.db.ns.svc');
  });

  it('when local.d holds several files, then they are read by name, with docker.ini among them', () => {
    const etc = etcWith([
      ['local.d/11-b.ini', ''],
      ['local.d/10-a.ini', ''],
      [DOCKER_INI, ''],
      ['local.d/notes.txt', ''],
    ]);
    expect(iniFilesIn(etc, 'local.d')).toEqual(['local.d/10-a.ini', 'local.d/11-b.ini', DOCKER_INI]);
    expect(iniFilesIn(etc, 'default.d')).toEqual(['default.d/10-docker-default.ini']);
  });

  it("when the runtime's settings are written, then they are the pod's address and volume, and a port only outside a pod", () => {
    expect(runtimeIni({ podIP: '127.0.1.2', dataDir: '/v/pvc-1' })).toContain(
      '[chttpd]\nbind_address = 127.0.1.2\n\n[couchdb]\ndatabase_dir = /v/pvc-1\nview_index_dir = /v/pvc-1\n',
    );
    expect(runtimeIni({ podIP: '127.0.0.1', dataDir: '/d', port: 4000 })).toContain(
      'bind_address = 127.0.0.1\nport = 4000\n',
    );
  });
});
