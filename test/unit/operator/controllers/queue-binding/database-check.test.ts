import { parseServerInfo } from '../../../../../operator/controllers/queue-binding/database-check.js';

// The first lines of INFO server as Debian's redis-server 7.0.15 and valkey-server 8.0.1 answer.
const REDIS_7 = '# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\nredis_mode:standalone\r\n';
const VALKEY_8 =
  '# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\nredis_git_sha1:00000000\r\n';

describe('parseServerInfo', () => {
  it('when the server is Redis, then the engine is redis at its redis_version', () => {
    expect(parseServerInfo(REDIS_7)).toEqual({
      server: { engine: 'redis', version: '7.0.15' },
      redisVersion: '7.0.15',
    });
  });

  it('when the server is Valkey, then the engine is valkey at its valkey_version, and redis_version is kept for the capability check', () => {
    expect(parseServerInfo(VALKEY_8)).toEqual({
      server: { engine: 'valkey', version: '8.0.1' },
      redisVersion: '7.2.4',
    });
  });
});
