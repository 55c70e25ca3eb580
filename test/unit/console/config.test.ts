import crypto from 'node:crypto';
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
    expect(config.queueBaseUrl).toBeUndefined();
    expect(read({ SETTEE_CONSOLE_QUEUE_BASE_URL: 'http://gw.settee.svc/' }).queueBaseUrl).toBe(
      'http://gw.settee.svc',
    );
    expect(read({}).sessionKey).not.toEqual(config.sessionKey);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('when a session secret is given, then the key is its SHA-256, the same in every replica', () => {
    const secret = 'a'.repeat(40);
    const expected = crypto.createHash('sha256').update(secret).digest();
    expect(Buffer.from(read({ SETTEE_CONSOLE_SESSION_SECRET: secret }).sessionKey)).toEqual(expected);
    expect(read({ SETTEE_CONSOLE_SESSION_SECRET: secret }).sessionKey).toEqual(
      read({ SETTEE_CONSOLE_SESSION_SECRET: secret }).sessionKey,
    );
  });

  it('when values are malformed, then every problem is named in one ConfigError', () => {
    expect(() =>
      read({
        SETTEE_CONSOLE_SESSION_SECRET: 'too-short',
        SETTEE_CONSOLE_PORT: 'eighty',
        SETTEE_CONSOLE_SESSION_TTL: 'forever',
        SETTEE_CONSOLE_TRUSTED_PROXIES: '10/8',
        SETTEE_CONSOLE_QUEUE_BASE_URL: 'ftp://gateway',
      }),
    ).toThrow(
      expect.objectContaining({
        constructor: ConfigError,
        problems: [
          expect.stringMatching(/^SETTEE_CONSOLE_SESSION_SECRET: expected at least 32 characters/),
          expect.stringMatching(/^SETTEE_CONSOLE_PORT=eighty/),
          expect.stringMatching(/^SETTEE_CONSOLE_SESSION_TTL=forever/),
          expect.stringMatching(/^SETTEE_CONSOLE_TRUSTED_PROXIES/),
          expect.stringMatching(/^SETTEE_CONSOLE_QUEUE_BASE_URL=ftp:\/\/gateway: expected an http\(s\) URL/),
        ],
      }),
    );
  });
});
