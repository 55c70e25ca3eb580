import {
  loadQueueConfig,
  QUEUE_CONFIG_DEFAULTS,
  QueueConfigError,
} from '../../../../gateway/queue/config.js';

describe('the queue config', () => {
  it("when nothing is set, then QStash's defaults apply and no private address is allowed", () => {
    const config = loadQueueConfig({});
    expect(config).toMatchObject({ ...QUEUE_CONFIG_DEFAULTS, ssrfAllowlist: [] });
    expect(config.maxBodyBytes).toBe(1_048_576);
    expect(config.defaultRetries).toBe(3);
    expect(Object.isFrozen(config)).toBe(true);
    expect(config.consumerName).toMatch(/-\d+-/);
  });

  it('when variables are set, then they are read', () => {
    const config = loadQueueConfig({
      SETTEE_QUEUE_SSRF_ALLOW: '127.0.0.0/8, ::1/128',
      SETTEE_QUEUE_RETRY_DELAY_SCALE: '0.001',
      SETTEE_QUEUE_MAX_BATCH_SIZE: '10',
      SETTEE_QUEUE_CONSUMER_NAME: 'gateway-0',
    });
    expect(config).toMatchObject({
      ssrfAllowlist: ['127.0.0.0/8', '::1/128'],
      retryDelayScale: 0.001,
      maxBatchSize: 10,
      consumerName: 'gateway-0',
    });
  });

  it.each([
    [{ SETTEE_QUEUE_MAX_BODY_BYTES: 'lots' }, /SETTEE_QUEUE_MAX_BODY_BYTES/],
    [{ SETTEE_QUEUE_SSRF_ALLOW: '127.0.0.1' }, /not a CIDR range/],
    [{ SETTEE_QUEUE_RETRY_DELAY_SCALE: '0' }, /positive number/],
    [{ SETTEE_QUEUE_DEFAULT_RETRIES: '30' }, /must not exceed SETTEE_QUEUE_MAX_RETRIES/],
    [
      { SETTEE_QUEUE_RECLAIM_IDLE_MS: '1000', SETTEE_QUEUE_DELIVERY_TIMEOUT_MS: '5000' },
      /longer than SETTEE_QUEUE_DELIVERY_TIMEOUT_MS/,
    ],
  ])('when %j is set, then the config is refused naming the variable', (env, message) => {
    expect(() => loadQueueConfig(env)).toThrow(QueueConfigError);
    expect(() => loadQueueConfig(env)).toThrow(message);
  });
});
