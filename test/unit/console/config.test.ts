import { readConsoleConfig } from '../../../console/config.js';
import { ConfigError, EnvReader } from '../../../observability/env-reader.js';

function read(env: Record<string, string>) {
  const reader = new EnvReader(env);
  const config = readConsoleConfig(reader);
  reader.assertValid();
  return config;
}

describe('the console configuration', () => {
  it('when nothing is set, then it listens on 8080 with an 8 h session, 4 streams per session and a random 32-byte key', () => {
    const config = read({});
    expect(config).toMatchObject({
      host: '0.0.0.0',
      port: 8080,
      sessionTtlMs: 8 * 3_600_000,
      maxStreamsPerSession: 4,
      trustedProxies: [],
    });
    expect(config.sessionKey).toHaveLength(32);
    expect(read({}).sessionKey).not.toEqual(config.sessionKey);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('when a session key is given in base64, then it is used as it is', () => {
    const key = Buffer.alloc(32, 9);
    expect(Buffer.from(read({ SETTEE_CONSOLE_SESSION_KEY: key.toString('base64') }).sessionKey)).toEqual(key);
  });

  it('when values are malformed, then every problem is named in one ConfigError', () => {
    expect(() =>
      read({
        SETTEE_CONSOLE_SESSION_KEY: Buffer.alloc(16).toString('base64'),
        SETTEE_CONSOLE_PORT: 'eighty',
        SETTEE_CONSOLE_SESSION_TTL: 'forever',
        SETTEE_CONSOLE_TRUSTED_PROXIES: '10/8',
      }),
    ).toThrow(
      expect.objectContaining({
        constructor: ConfigError,
        problems: [
          expect.stringMatching(/^SETTEE_CONSOLE_SESSION_KEY: expected 32 bytes/),
          expect.stringMatching(/^SETTEE_CONSOLE_PORT=eighty/),
          expect.stringMatching(/^SETTEE_CONSOLE_SESSION_TTL=forever/),
          expect.stringMatching(/^SETTEE_CONSOLE_TRUSTED_PROXIES/),
        ],
      }),
    );
  });
});
