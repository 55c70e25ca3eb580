import { loadOperatorConfig } from '../../../operator/config.js';
import { ConfigError, parseDurationMs } from '../../../observability/env-reader.js';

describe('loadOperatorConfig', () => {
  it('when the environment is empty, then the documented defaults apply and the result is frozen', () => {
    const config = loadOperatorConfig({});
    expect(config).toMatchObject({
      watchNamespace: undefined,
      controllers: {
        workers: 4,
        instanceWorkers: 16,
        resyncPeriodMs: 600_000,
        backoff: { baseMs: 100, maxMs: 120_000 },
      },
      leaderElection: {
        enabled: true,
        namespace: 'default',
        leaseName: 'settee-operator',
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
      },
      observability: { logLevel: 'info', metricsHost: '127.0.0.1', metricsPort: 8080 },
      shutdownTimeoutMs: 30_000,
      kube: { requestTimeoutMs: 30_000, watchTimeout: { minMs: 300_000, graceMs: 30_000 } },
    });
    expect(config.leaderElection.identity).toMatch(/_[0-9a-f]{8}$/);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.controllers.backoff)).toBe(true);
  });

  it('when variables are set, then they are parsed, and the Lease namespace follows the watched one', () => {
    const config = loadOperatorConfig({
      SETTEE_WATCH_NAMESPACE: 'tenants',
      SETTEE_WORKERS: '8',
      SETTEE_INSTANCE_WORKERS: '32',
      SETTEE_RESYNC_PERIOD: '1m30s',
      SETTEE_LEADER_ELECTION: 'false',
      SETTEE_LEASE_DURATION: '3s',
      SETTEE_LEASE_RENEW_DEADLINE: '1500ms',
      SETTEE_LEASE_RETRY_PERIOD: '200ms',
      SETTEE_LOG_LEVEL: 'debug',
      SETTEE_METRICS_PORT: '0',
      POD_NAME: 'settee-operator-0',
    });
    expect(config.watchNamespace).toBe('tenants');
    expect(config.controllers.workers).toBe(8);
    expect(config.controllers.instanceWorkers).toBe(32);
    expect(config.controllers.resyncPeriodMs).toBe(90_000);
    expect(config.leaderElection).toMatchObject({
      enabled: false,
      namespace: 'tenants',
      identity: 'settee-operator-0',
      leaseDurationMs: 3_000,
      renewDeadlineMs: 1_500,
      retryPeriodMs: 200,
    });
    expect(config.observability).toMatchObject({ logLevel: 'debug', metricsPort: 0 });
  });

  it('when the Kubernetes API timeouts are set, then a short watch timeout gets a grace of half of it', () => {
    const config = loadOperatorConfig({
      SETTEE_KUBE_REQUEST_TIMEOUT: '5s',
      SETTEE_KUBE_WATCH_TIMEOUT: '10s',
    });
    expect(config.kube).toEqual({ requestTimeoutMs: 5_000, watchTimeout: { minMs: 10_000, graceMs: 5_000 } });
    expect(() => loadOperatorConfig({ SETTEE_KUBE_WATCH_TIMEOUT: '500ms' })).toThrow(
      /SETTEE_KUBE_WATCH_TIMEOUT/,
    );
  });

  it('when several values are wrong, then one ConfigError lists every problem', () => {
    let error: unknown;
    try {
      loadOperatorConfig({
        SETTEE_WORKERS: 'many',
        SETTEE_LOG_LEVEL: 'loud',
        SETTEE_LEADER_ELECTION: 'maybe',
        SETTEE_LEASE_DURATION: '1500ms',
        SETTEE_RESYNC_PERIOD: 'ten minutes',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toMatch(/SETTEE_WORKERS=many/);
    expect(problems).toMatch(/SETTEE_LOG_LEVEL=loud: expected one of error, warn, info, debug/);
    expect(problems).toMatch(/SETTEE_LEADER_ELECTION=maybe/);
    expect(problems).toMatch(/SETTEE_LEASE_DURATION must be a whole number of seconds/);
    expect(problems).toMatch(/SETTEE_RESYNC_PERIOD=ten minutes/);
    expect((error as ConfigError).code).toBe('INVALID_CONFIG');
  });

  it('when the lease duration leaves less than 1 s after the renew deadline and a retry period, then start-up is refused naming the three settings', () => {
    // 15/14/2 s: a leader that cannot renew would lead until 16 s, past a standby's takeover at 15 s.
    expect(() =>
      loadOperatorConfig({
        SETTEE_LEASE_DURATION: '15s',
        SETTEE_LEASE_RENEW_DEADLINE: '14s',
        SETTEE_LEASE_RETRY_PERIOD: '2s',
      }),
    ).toThrow(
      /SETTEE_LEASE_DURATION must be at least SETTEE_LEASE_RENEW_DEADLINE \+ SETTEE_LEASE_RETRY_PERIOD \+ 1s \(15000 ms < 14000 \+ 2000 \+ 1000 ms\)/,
    );
    expect(() =>
      loadOperatorConfig({
        SETTEE_LEASE_DURATION: '15s',
        SETTEE_LEASE_RENEW_DEADLINE: '12001ms',
        SETTEE_LEASE_RETRY_PERIOD: '2s',
      }),
    ).toThrow(/SETTEE_LEASE_DURATION must be at least/);
    // Exactly 1 s left passes, as the soak's 6/4/1 s does.
    expect(
      loadOperatorConfig({
        SETTEE_LEASE_DURATION: '6s',
        SETTEE_LEASE_RENEW_DEADLINE: '4s',
        SETTEE_LEASE_RETRY_PERIOD: '1s',
      }).leaderElection,
    ).toMatchObject({ leaseDurationMs: 6_000, renewDeadlineMs: 4_000, retryPeriodMs: 1_000 });
  });

  it('when the lease timings are out of order, then start-up is refused', () => {
    expect(() =>
      loadOperatorConfig({ SETTEE_LEASE_DURATION: '5s', SETTEE_LEASE_RENEW_DEADLINE: '5s' }),
    ).toThrow(/SETTEE_LEASE_DURATION must be at least SETTEE_LEASE_RENEW_DEADLINE/);
    expect(() => loadOperatorConfig({ SETTEE_LEASE_RETRY_PERIOD: '10s' })).toThrow(
      /RETRY_PERIOD must be shorter than SETTEE_LEASE_RENEW_DEADLINE/,
    );
  });
});

describe('parseDurationMs', () => {
  it('when given units and combinations, then it returns milliseconds, and undefined for anything else', () => {
    expect(parseDurationMs('500ms')).toBe(500);
    expect(parseDurationMs('10s')).toBe(10_000);
    expect(parseDurationMs('15m')).toBe(900_000);
    expect(parseDurationMs('1h30m')).toBe(5_400_000);
    expect(parseDurationMs('1.5s')).toBe(1_500);
    expect(parseDurationMs('10')).toBeUndefined();
    expect(parseDurationMs('-1s')).toBeUndefined();
    expect(parseDurationMs('s')).toBeUndefined();
  });
});
