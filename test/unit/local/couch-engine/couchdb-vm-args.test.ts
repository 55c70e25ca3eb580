import {
  buildCouchDbVmArgs,
  epmdModeFor,
  FALLBACK_BASE_VM_ARGS,
  type CouchDbVmArgsInput,
} from '../../../../local/couch-engine/couchdb-vm-args.js';
import { InvalidCouchEngineConfigError } from '../../../../local/couch-engine/errors.js';

const input: CouchDbVmArgsInput = {
  nodeName: 'settee-0a1b2c3d4e5f',
  cookie: 'c0ffee0123456789c0ffee0123456789',
  distributionPort: 41234,
  epmd: 'none',
};

// What CouchDB 3.x's packages install as etc/vm.args, trimmed.
const installedVmArgs = `# Each node in the system must have a unique name.
-name couchdb@127.0.0.1

# All nodes must share the same magic cookie for distributed Erlang to work.
-setcookie monster

# Which interfaces should the node listen on?
-kernel inet_dist_use_interface {127,0,0,1}

# Tell kernel and SASL not to log anything
-kernel error_logger silent
-sasl sasl_error_logger false
-kernel prevent_overlapping_partitions false
+SDio 16

# Comment this line out to enable the interactive Erlang shell on startup
+Bd -noinput
`;

function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '' && !line.trim().startsWith('#'));
}

describe('buildCouchDbVmArgs', () => {
  // Not `-erl_epmd_port <port>`: OTP applies it to every outgoing connection, so CouchDB 3.5's
  // ping of clouseau@127.0.0.1 on each Mango index validation dialled the node itself and stalled
  // for 7 s, and every `POST /{db}/_index` after the first answered 500 case_clause.
  it('when built without epmd, then the node has its own name and cookie and listens for no distribution', () => {
    expect(lines(buildCouchDbVmArgs(input))).toEqual([
      ...lines(FALLBACK_BASE_VM_ARGS),
      '-name settee-0a1b2c3d4e5f@127.0.0.1',
      '-setcookie c0ffee0123456789c0ffee0123456789',
      '-kernel inet_dist_use_interface {127,0,0,1}',
      '-kernel inet_dist_listen_min 41234',
      '-kernel inet_dist_listen_max 41234',
      '-start_epmd false',
      '-dist_listen false',
    ]);
    expect(buildCouchDbVmArgs(input)).not.toContain('-erl_epmd_port');
  });

  it("when the install's vm.args fixes the epmd port, then that global redirect is dropped", () => {
    const built = buildCouchDbVmArgs({ ...input, baseVmArgs: '-erl_epmd_port 4369\n+Bd -noinput' });
    expect(built).not.toContain('-erl_epmd_port');
  });

  it('when built with the shared epmd, then epmd is neither disabled nor bypassed', () => {
    const args = buildCouchDbVmArgs({ ...input, epmd: 'shared' });
    expect(args).not.toContain('-start_epmd');
    expect(args).not.toContain('-erl_epmd_port');
    expect(args).not.toContain('-dist_listen');
    expect(args).toContain('-kernel inet_dist_listen_min 41234');
  });

  it("when the install's vm.args is given, then its tuning stays and its name, cookie and interface are replaced", () => {
    const built = lines(buildCouchDbVmArgs({ ...input, baseVmArgs: installedVmArgs }));
    expect(built).toEqual(
      expect.arrayContaining(['-kernel prevent_overlapping_partitions false', '+SDio 16']),
    );
    expect(built).not.toContain('-name couchdb@127.0.0.1');
    expect(built).not.toContain('-setcookie monster');
    expect(built.filter((l) => l.startsWith('-name '))).toHaveLength(1);
    expect(built.filter((l) => l.startsWith('-setcookie '))).toHaveLength(1);
    expect(built.filter((l) => l.includes('inet_dist_use_interface'))).toHaveLength(1);
    expect(built.filter((l) => l.includes('-noinput'))).toEqual(['+Bd -noinput']);
  });

  it("when the install's vm.args lacks -noinput, then it is added so the node never waits for a shell", () => {
    expect(lines(buildCouchDbVmArgs({ ...input, baseVmArgs: '+K true\n# +Bd -noinput' }))).toContain(
      '+Bd -noinput',
    );
  });

  it("when the install's vm.args sets an ini chain, then it is dropped so COUCHDB_INI_FILES decides", () => {
    const built = buildCouchDbVmArgs({
      ...input,
      baseVmArgs: '-couch_ini /etc/couchdb/local.ini\n+Bd -noinput',
    });
    expect(built).not.toContain('-couch_ini');
  });

  it.each([
    ['a node name with a host', { nodeName: 'settee@otherhost' }],
    ['a short cookie', { cookie: 'monster' }],
    ['a port out of range', { distributionPort: 0 }],
  ])('when given %s, then it is refused', (_what, change) => {
    expect(() => buildCouchDbVmArgs({ ...input, ...change })).toThrow(InvalidCouchEngineConfigError);
  });
});

describe('epmdModeFor', () => {
  it.each([
    ['11.1 3.1.1', 'none'],
    ['12.3.2.5 3.3.3', 'none'],
    ['13.2.2.4 3.4.1', 'none'],
    ['11.0.3 3.1.0', 'shared'],
    ['10.7.2.1 3.1.0', 'shared'],
    [undefined, 'shared'],
    ['garbage', 'shared'],
  ])('when start_erl.data is %j, then epmd is %s', (startErlData, mode) => {
    expect(epmdModeFor(startErlData)).toBe(mode);
  });
});
