import { ConfigError } from '../../../observability/env-reader.js';
import { loadGatewayConfig } from '../../../gateway/config.js';

describe('loadGatewayConfig', () => {
  it('when nothing is set, then the documented defaults apply', () => {
    const config = loadGatewayConfig({ POD_NAME: 'gateway-0' });
    expect(config.listen).toEqual({ host: '127.0.0.1', port: 8080 });
    expect(config.tls).toBeUndefined();
    expect(config.domain).toBeUndefined();
    expect(config.fastPath).toBe(true);
    expect(config.wake).toEqual({
      holdQueueLimit: 1000,
      timeoutMs: 15_000,
      probeIntervalMs: 5,
      retryIntervalMs: 1000,
      retryAfterSeconds: 5,
    });
    expect(config.activity).toEqual({
      reportIntervalMs: 5000,
      replicaName: 'gateway-0',
      usageReportIntervalMs: 30_000,
    });
    expect(config.upstream).toEqual({
      maxConnectionsPerAddress: 256,
      idleTimeoutMs: 30_000,
      headersTimeoutMs: 300_000,
    });
    expect(config.trustedProxies).toEqual([]);
    expect(config.clients).toEqual({
      headersTimeoutMs: 60_000,
      idleTimeoutMs: 65_000,
      maxConnections: undefined,
      maxHeaderBytes: 16_384,
      maxInstanceRequests: 0,
    });
    expect(Object.isFrozen(config.wake)).toBe(true);
    expect(config.envelope).toEqual({
      enabled: true,
      ratesPerSecond: { read: 20, write: 10, query: 5 },
      replicas: 1,
      storage: { text: '1Gi', bytes: 2 ** 30 },
      databases: 20,
    });
  });

  it('when an envelope limit is negative or malformed, then the error names each setting', () => {
    const load = (): unknown =>
      loadGatewayConfig({
        SETTEE_GATEWAY_FREE_READS_PER_SECOND: '-1',
        SETTEE_GATEWAY_FREE_WRITES_PER_SECOND: 'ten',
        SETTEE_GATEWAY_FREE_QUERIES_PER_SECOND: '0',
        SETTEE_GATEWAY_FREE_STORAGE: '-5Gi',
        SETTEE_GATEWAY_FREE_DATABASES: '2.5',
        SETTEE_GATEWAY_REPLICAS: '0',
        SETTEE_GATEWAY_ENVELOPE: 'maybe',
        SETTEE_GATEWAY_USAGE_INTERVAL: '10ms',
        SETTEE_GATEWAY_FAST_PATH: 'yes please',
      });
    expect(load).toThrow(ConfigError);
    const message = (() => {
      try {
        load();
        return '';
      } catch (err) {
        return (err as Error).message;
      }
    })();
    for (const name of [
      'SETTEE_GATEWAY_FREE_READS_PER_SECOND=-1',
      'SETTEE_GATEWAY_FREE_WRITES_PER_SECOND=ten',
      'SETTEE_GATEWAY_FREE_QUERIES_PER_SECOND=0',
      'SETTEE_GATEWAY_FREE_STORAGE=-5Gi',
      'SETTEE_GATEWAY_FREE_DATABASES=2.5',
      'SETTEE_GATEWAY_REPLICAS=0',
      'SETTEE_GATEWAY_ENVELOPE=maybe',
      'SETTEE_GATEWAY_USAGE_INTERVAL=10ms',
      'SETTEE_GATEWAY_FAST_PATH=yes please',
    ]) {
      expect(message).toContain(name);
    }
  });

  it('when values are given, then they are read with their units', () => {
    const config = loadGatewayConfig({
      SETTEE_GATEWAY_PORT: '0',
      SETTEE_GATEWAY_DOMAIN: '.Couch.Example.com.',
      SETTEE_GATEWAY_TLS_CERT: '/tls/crt',
      SETTEE_GATEWAY_TLS_KEY: '/tls/key',
      SETTEE_GATEWAY_WAKE_TIMEOUT: '2s',
      SETTEE_GATEWAY_HOLD_QUEUE_LIMIT: '5',
      SETTEE_GATEWAY_ACTIVITY_INTERVAL: '250ms',
      SETTEE_GATEWAY_USAGE_INTERVAL: '1m',
      SETTEE_GATEWAY_UPSTREAM_HEADERS_TIMEOUT: '90s',
      SETTEE_GATEWAY_TRUSTED_PROXIES: ' 10.42.0.0/16, fd00:42::/64 ,',
      SETTEE_GATEWAY_CLIENT_HEADERS_TIMEOUT: '10s',
      SETTEE_GATEWAY_CLIENT_IDLE_TIMEOUT: '2m',
      SETTEE_GATEWAY_MAX_CONNECTIONS: '20000',
      SETTEE_GATEWAY_MAX_HEADER_BYTES: '32768',
      SETTEE_GATEWAY_MAX_INSTANCE_REQUESTS: '64',
      SETTEE_GATEWAY_FAST_PATH: 'false',
    });
    expect(config.listen.port).toBe(0);
    expect(config.fastPath).toBe(false);
    expect(config.domain).toBe('couch.example.com');
    expect(config.tls).toEqual({ certFile: '/tls/crt', keyFile: '/tls/key' });
    expect(config.wake.timeoutMs).toBe(2000);
    expect(config.wake.holdQueueLimit).toBe(5);
    expect(config.activity.reportIntervalMs).toBe(250);
    expect(config.activity.usageReportIntervalMs).toBe(60_000);
    expect(config.upstream.headersTimeoutMs).toBe(90_000);
    expect(config.trustedProxies).toEqual(['10.42.0.0/16', 'fd00:42::/64']);
    expect(config.clients).toEqual({
      headersTimeoutMs: 10_000,
      idleTimeoutMs: 120_000,
      maxConnections: 20_000,
      maxHeaderBytes: 32_768,
      maxInstanceRequests: 64,
    });
  });

  it('when a trusted proxy range is not a CIDR range, then each one is named in its own problem', () => {
    let error: unknown;
    try {
      loadGatewayConfig({ SETTEE_GATEWAY_TRUSTED_PROXIES: '10.42.0.0/16,10.0.0.1,10/8,10.0.0.0/33' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual(
      ['"10.0.0.1"', '"10/8"', '"10.0.0.0/33"'].map(
        (range) =>
          `SETTEE_GATEWAY_TRUSTED_PROXIES: ${range} is not a CIDR range such as 10.0.0.0/8 or fd00::/8`,
      ),
    );
  });

  it('when values are wrong, then every problem is reported at once', () => {
    let error: unknown;
    try {
      loadGatewayConfig({
        SETTEE_GATEWAY_PORT: 'eighty',
        SETTEE_GATEWAY_TLS_CERT: '/only/cert',
        SETTEE_GATEWAY_DOMAIN: 'not a domain',
        SETTEE_GATEWAY_WAKE_TIMEOUT: 'soon',
        SETTEE_GATEWAY_UPSTREAM_HEADERS_TIMEOUT: '0s',
        SETTEE_GATEWAY_CLIENT_HEADERS_TIMEOUT: '0s',
        SETTEE_GATEWAY_CLIENT_IDLE_TIMEOUT: 'never',
        SETTEE_GATEWAY_MAX_CONNECTIONS: '-1',
        SETTEE_GATEWAY_MAX_HEADER_BYTES: '100',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toHaveLength(9);
  });
});
