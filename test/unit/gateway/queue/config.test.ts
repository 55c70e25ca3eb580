import { ConfigError, EnvReader } from '../../../../observability/env-reader.js';
import { readGatewayConfig } from '../../../../gateway/config.js';
import {
  loadQueueConfig,
  QUEUE_CONFIG_DEFAULTS,
  readQueueConfig,
  validateQueueConfig,
} from '../../../../gateway/queue/core/config.js';

function problemsOf(load: () => unknown): readonly string[] {
  try {
    load();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('the queue config', () => {
  it("when nothing is set, then QStash's defaults apply and no private address is allowed", () => {
    const config = loadQueueConfig({});
    expect(config).toMatchObject({ ...QUEUE_CONFIG_DEFAULTS, ssrfAllowlist: [] });
    expect(config.maxBodyBytes).toBe(1_048_576);
    expect(config.defaultRetries).toBe(3);
    // Quotas are the operator's settings, published in each binding's status.limits.
    expect(config).not.toHaveProperty('maxQueues');
    expect(Object.isFrozen(config)).toBe(true);
    expect(config.consumerName).toMatch(/-\d+-/);
  });

  it('when variables are set, then they are read', () => {
    const config = loadQueueConfig({
      SETTEE_QUEUE_SSRF_ALLOW: '127.0.0.0/8, ::1/128',
      SETTEE_QUEUE_RETRY_DELAY_SCALE: '0.001',
      SETTEE_QUEUE_MAX_BATCH_SIZE: '10',
      SETTEE_QUEUE_CONSUMER_NAME: 'gateway-0',
      SETTEE_QUEUE_DELAY_WAKEUPS: 'false',
      SETTEE_QUEUE_SCHEDULE_CLAIM_LEASE_MS: '10000',
    });
    expect(config).toMatchObject({
      scheduleClaimLeaseMs: 10_000,
      delayWakeups: false,
      ssrfAllowlist: ['127.0.0.0/8', '::1/128'],
      retryDelayScale: 0.001,
      maxBatchSize: 10,
      consumerName: 'gateway-0',
    });
  });

  it.each([
    [{ SETTEE_QUEUE_MAX_BODY_BYTES: 'lots' }, /^SETTEE_QUEUE_MAX_BODY_BYTES=lots: expected an integer/],
    [
      { SETTEE_QUEUE_MAX_REDIRECTS: '21' },
      /^SETTEE_QUEUE_MAX_REDIRECTS=21: expected an integer from 0 to 20/,
    ],
    [{ SETTEE_QUEUE_SSRF_ALLOW: '127.0.0.1' }, /^SETTEE_QUEUE_SSRF_ALLOW: "127.0.0.1" is not a CIDR range/],
    [
      { SETTEE_QUEUE_RETRY_DELAY_SCALE: '0' },
      /^SETTEE_QUEUE_RETRY_DELAY_SCALE=0: expected a positive number/,
    ],
    [
      { SETTEE_QUEUE_DEFAULT_RETRIES: '30' },
      /^SETTEE_QUEUE_DEFAULT_RETRIES: must not exceed SETTEE_QUEUE_MAX_RETRIES/,
    ],
    [
      { SETTEE_QUEUE_RECLAIM_IDLE_MS: '1000', SETTEE_QUEUE_DELIVERY_TIMEOUT_MS: '5000' },
      /^SETTEE_QUEUE_RECLAIM_IDLE_MS: must be longer than SETTEE_QUEUE_DELIVERY_TIMEOUT_MS \(5000\)/,
    ],
  ])('when %j is set, then a ConfigError names the variable', (env, message) => {
    expect(() => loadQueueConfig(env)).toThrow(ConfigError);
    const problems = problemsOf(() => loadQueueConfig(env));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
  });

  it('when two variables are bad, then one ConfigError lists both', () => {
    const problems = problemsOf(() =>
      loadQueueConfig({
        SETTEE_QUEUE_MAX_BATCH_SIZE: 'many',
        SETTEE_QUEUE_SSRF_ALLOW: '10.0.0.0/8,not-a-range',
        SETTEE_QUEUE_DEFAULT_RETRIES: '30',
      }),
    );
    expect(problems).toEqual([
      expect.stringMatching(/^SETTEE_QUEUE_MAX_BATCH_SIZE=many:/),
      expect.stringMatching(/^SETTEE_QUEUE_SSRF_ALLOW: "not-a-range"/),
      expect.stringMatching(/^SETTEE_QUEUE_DEFAULT_RETRIES: must not exceed/),
    ]);
  });

  it('when a config built by a test has an empty key prefix, then validation refuses it with a ConfigError', () => {
    const problems = problemsOf(() => validateQueueConfig({ ...loadQueueConfig({}), keyPrefix: '' }));
    expect(problems).toEqual(['SETTEE_QUEUE_KEY_PREFIX: must not be empty']);
  });

  it("when the gateway's and the queue's sections are read through one reader, as gateway/main.ts does, then one ConfigError lists the problems of both", () => {
    const read = new EnvReader({ SETTEE_GATEWAY_PORT: 'http', SETTEE_QUEUE_MAX_REDIRECTS: '-1' });
    readGatewayConfig(read);
    readQueueConfig(read);
    expect(problemsOf(() => read.assertValid())).toEqual([
      expect.stringMatching(/^SETTEE_GATEWAY_PORT=http:/),
      expect.stringMatching(/^SETTEE_QUEUE_MAX_REDIRECTS=-1:/),
    ]);
  });
});
