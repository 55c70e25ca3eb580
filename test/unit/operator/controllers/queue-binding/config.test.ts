import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readQueueBindingConfig } from '../../../../../operator/controllers/queue-binding/config.js';
import { ConfigError, EnvReader } from '../../../../../observability/env-reader.js';

function read(env: Record<string, string>) {
  const reader = new EnvReader(env);
  const config = readQueueBindingConfig(reader);
  reader.assertValid();
  return config;
}

describe('the queue-binding section of the operator config', () => {
  it('when nothing is set, then there is no master secret and the defaults apply', () => {
    expect(read({})).toEqual({
      masterSecret: undefined,
      queueBaseUrl: 'http://127.0.0.1:8080',
      checkIntervalMs: 60_000,
      databaseTimeoutMs: 3_000,
      limitDefaults: {
        maxDelay: '7d',
        maxTimeout: '15m',
        maxDeadLetters: 10_000,
        maxQueues: 10,
        maxQueueParallelism: 100,
        maxSchedules: 10,
        maxUrlGroups: 1,
        maxUrlGroupEndpoints: 100,
      },
    });
  });

  it('when limit defaults are set, then they are read within the CRD bounds of the same spec.limits fields', () => {
    expect(
      read({ SETTEE_QUEUE_MAX_QUEUES: '25', SETTEE_QUEUE_MAX_URL_GROUP_ENDPOINTS: '1000' }).limitDefaults,
    ).toMatchObject({ maxQueues: 25, maxUrlGroupEndpoints: 1_000, maxSchedules: 10 });
    expect(() => read({ SETTEE_QUEUE_MAX_URL_GROUP_ENDPOINTS: '1001' })).toThrow(
      /SETTEE_QUEUE_MAX_URL_GROUP_ENDPOINTS=1001: expected an integer from 1 to 1000/,
    );
  });

  it('when the master secret comes from the environment or a file, then it is taken (the file wins)', () => {
    const secret = 's'.repeat(40);
    expect(read({ SETTEE_SIGNING_MASTER_SECRET: secret }).masterSecret).toBe(secret);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'settee-secret-'));
    try {
      const file = path.join(dir, 'master');
      fs.writeFileSync(file, `${'f'.repeat(40)}\n`);
      const config = read({ SETTEE_SIGNING_MASTER_SECRET: secret, SETTEE_SIGNING_MASTER_SECRET_FILE: file });
      expect(config.masterSecret).toBe('f'.repeat(40));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('when the master secret is short, then the config is refused without showing the secret', () => {
    let error: unknown;
    try {
      read({ SETTEE_SIGNING_MASTER_SECRET: 'short-secret-value' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/at least 32 characters/);
    expect((error as Error).message).not.toContain('short-secret-value');
  });

  it('when values are malformed, then each is reported', () => {
    expect(() => read({ SETTEE_QUEUE_BASE_URL: 'ftp://x', SETTEE_QUEUE_CHECK_INTERVAL: 'often' })).toThrow(
      /SETTEE_QUEUE_BASE_URL=ftp:\/\/x[\s\S]*SETTEE_QUEUE_CHECK_INTERVAL=often/,
    );
    expect(() => read({ SETTEE_SIGNING_MASTER_SECRET_FILE: '/nonexistent/master' })).toThrow(
      /cannot be read/,
    );
  });
});
