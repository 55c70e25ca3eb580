import {
  buildCouchDbIni,
  buildCouchDbIniFilesEnv,
  type CouchDbIniInput,
} from '../../../../local/couch-engine/couchdb-ini.js';
import { InvalidCouchEngineConfigError } from '../../../../local/couch-engine/errors.js';

const input: CouchDbIniInput = {
  port: 25984,
  dataDir: '/var/lib/settee/a',
  runDir: '/tmp/settee-couchdb-x',
  uuid: '0123456789abcdef0123456789abcdef',
  admin: { username: 'admin', password: 's3cret=with/odd+chars' },
  secret: 'cookie-secret',
};

/** section -> key -> value, read the way CouchDB splits lines (at the first " = "). */
function parseIni(text: string): Record<string, Record<string, string>> {
  const sections: Record<string, Record<string, string>> = {};
  let current: Record<string, string> | undefined;
  for (const line of text.split('\n')) {
    const header = /^\[(.+)\]$/.exec(line);
    if (header?.[1]) current = sections[header[1]] = {};
    else if (current && line.includes(' = ')) {
      const at = line.indexOf(' = ');
      current[line.slice(0, at)] = line.slice(at + 3);
    }
  }
  return sections;
}

describe('buildCouchDbIni', () => {
  it('when built, then chttpd listens on the given port on loopback only', () => {
    expect(parseIni(buildCouchDbIni(input)).chttpd).toEqual({ port: '25984', bind_address: '127.0.0.1' });
  });

  it("when given a pod's own loopback address, then chttpd binds that address", () => {
    expect(parseIni(buildCouchDbIni({ ...input, host: '127.3.4.5' })).chttpd?.bind_address).toBe('127.3.4.5');
  });

  it.each(['0.0.0.0', '10.0.0.1', '127.0.0.256'])(
    'when given %s to bind, then it is refused as not loopback',
    (host) => {
      expect(() => buildCouchDbIni({ ...input, host })).toThrow(InvalidCouchEngineConfigError);
    },
  );

  it('when built, then databases and view indexes live in dataDir and the node is a single node', () => {
    const ini = parseIni(buildCouchDbIni(input));
    expect(ini.couchdb).toEqual({
      database_dir: '/var/lib/settee/a',
      view_index_dir: '/var/lib/settee/a',
      uri_file: '/tmp/settee-couchdb-x/couch.uri',
      uuid: '0123456789abcdef0123456789abcdef',
      single_node: 'true',
    });
    expect(ini.cluster).toEqual({ n: '1' });
  });

  it('when built, then the admin, the cookie secret and stderr logging are set', () => {
    const ini = parseIni(buildCouchDbIni(input));
    expect(ini.admins).toEqual({ admin: 's3cret=with/odd+chars' });
    expect(ini.chttpd_auth).toEqual({ secret: 'cookie-secret' });
    expect(ini.couch_httpd_auth).toEqual({ secret: 'cookie-secret' });
    expect(ini.log).toEqual({ writer: 'stderr', level: 'notice' });
  });

  it('when built twice from the same input, then the text is identical', () => {
    expect(buildCouchDbIni(input)).toBe(buildCouchDbIni({ ...input }));
  });

  it.each([
    ['a line break', 'pass\nword'],
    ['an inline comment', 'pass ;word'],
    ['a leading semicolon', ';password'],
    ['surrounding whitespace', ' password'],
    ['nothing', ''],
  ])('when the password holds %s, then it is refused without echoing it', (_what, password) => {
    const build = (): string => buildCouchDbIni({ ...input, admin: { username: 'admin', password } });
    expect(build).toThrow(InvalidCouchEngineConfigError);
    try {
      build();
    } catch (err) {
      if (password.trim() !== '') expect((err as Error).message).not.toContain(password.trim());
    }
  });

  it.each(['ad min', 'ad=min', '[admin]', ''])('when the username is %j, then it is refused', (username) => {
    expect(() => buildCouchDbIni({ ...input, admin: { username, password: 'x' } })).toThrow(
      InvalidCouchEngineConfigError,
    );
  });

  it('when the port is out of range, then it is refused', () => {
    expect(() => buildCouchDbIni({ ...input, port: 70_000 })).toThrow(InvalidCouchEngineConfigError);
  });
});

describe('buildCouchDbIniFilesEnv', () => {
  it('when given files, then they are joined by spaces in order', () => {
    expect(
      buildCouchDbIniFilesEnv(['/opt/couchdb/etc/default.ini', '/opt/couchdb/etc/default.d', '/tmp/x.ini']),
    ).toBe('/opt/couchdb/etc/default.ini /opt/couchdb/etc/default.d /tmp/x.ini');
  });

  it('when a path holds a space, then it is refused', () => {
    expect(() => buildCouchDbIniFilesEnv(['/opt/my couchdb/etc/default.ini'])).toThrow(
      InvalidCouchEngineConfigError,
    );
  });
});
