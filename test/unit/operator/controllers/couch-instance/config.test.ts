import { ConfigError, EnvReader } from '../../../../../observability/env-reader.js';
import { readCouchInstanceConfig } from '../../../../../operator/controllers/couch-instance/config.js';

const readConfig = (env: Record<string, string>) => {
  const reader = new EnvReader(env);
  const config = readCouchInstanceConfig(reader);
  reader.assertValid();
  return config;
};

describe('readCouchInstanceConfig', () => {
  it('when nothing is set, then the documented defaults apply', () => {
    expect(readConfig({})).toEqual({
      endpointTemplate: 'http://127.0.0.1:8080/db/{namespace}/{name}',
      defaultVersion: '3.5.1',
      vendorName: 'Settee',
      freeEnvelope: { storage: '1Gi', cpu: '1', memory: '1Gi' },
      freeInstancesPerNamespace: 5,
      defaultResources: {
        requests: { cpu: '100m', memory: '256Mi' },
        limits: { cpu: '500m', memory: '512Mi' },
      },
      replicationCheckTimeoutMs: 2_000,
      usageMeasureIntervalMs: 60_000,
      usageMeasureTimeoutMs: 5_000,
      usageMeterIntervalMs: 300_000,
      startDeadlineMs: 600_000,
      startDeadline: '10m',
    });
  });

  it('when SETTEE_START_DEADLINE is set, then it is read with its text for messages; under a second it is refused by name', () => {
    expect(readConfig({ SETTEE_START_DEADLINE: '90s' })).toMatchObject({
      startDeadlineMs: 90_000,
      startDeadline: '90s',
    });
    expect(() => readConfig({ SETTEE_START_DEADLINE: '10ms' })).toThrow(/SETTEE_START_DEADLINE=10ms/);
  });

  it('when the usage measurement interval is under a second or malformed, then the setting is named', () => {
    expect(() => readConfig({ SETTEE_USAGE_MEASURE_INTERVAL: '10ms' })).toThrow(
      /SETTEE_USAGE_MEASURE_INTERVAL=10ms/,
    );
    expect(() => readConfig({ SETTEE_USAGE_MEASURE_TIMEOUT: '-5s' })).toThrow(
      /SETTEE_USAGE_MEASURE_TIMEOUT=-5s/,
    );
    expect(readConfig({ SETTEE_USAGE_MEASURE_INTERVAL: '5m' }).usageMeasureIntervalMs).toBe(300_000);
  });

  it('when the free instances per namespace are zero, negative or not a number, then the setting is named', () => {
    for (const value of ['0', '-1', 'five'])
      expect(() => readConfig({ SETTEE_FREE_INSTANCES_PER_NAMESPACE: value })).toThrow(
        new RegExp(`SETTEE_FREE_INSTANCES_PER_NAMESPACE=${value}`),
      );
    expect(readConfig({ SETTEE_FREE_INSTANCES_PER_NAMESPACE: '3' }).freeInstancesPerNamespace).toBe(3);
  });

  it('when the replication check timeout is set, then it is read as a duration', () => {
    expect(readConfig({ SETTEE_REPLICATION_CHECK_TIMEOUT: '500ms' }).replicationCheckTimeoutMs).toBe(500);
  });

  it('when values are wrong, then every problem is reported at once', () => {
    let error: unknown;
    try {
      readConfig({
        SETTEE_ENDPOINT_TEMPLATE: 'https://example.com/',
        SETTEE_COUCHDB_DEFAULT_VERSION: '2.3.1',
        SETTEE_FREE_STORAGE: 'lots',
        SETTEE_DEFAULT_MEMORY_LIMIT: '2Gi',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      expect.stringContaining('SETTEE_ENDPOINT_TEMPLATE'),
      expect.stringContaining('SETTEE_COUCHDB_DEFAULT_VERSION=2.3.1'),
      expect.stringContaining('SETTEE_FREE_STORAGE=lots'),
      expect.stringContaining('outside the free envelope'),
    ]);
  });
});
