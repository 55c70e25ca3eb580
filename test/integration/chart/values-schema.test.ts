import { CHART_DIR, helm, templateArgs } from '../../helpers/chart/chart-harness.js';

/** Renders with one --set and returns helm's refusal (stderr), failing the test if helm accepted it. */
async function refusalOf(key: string, value: string): Promise<string> {
  const result = await helm([
    'template',
    ...templateArgs({ release: 'prod', namespace: 'settee-system', set: { [key]: value } }),
  ]);
  expect(result.code).not.toBe(0);
  return result.stderr;
}

describe('values.schema.json', () => {
  it('when a value has the wrong type, then the install fails naming the field, the expected and the given type', async () => {
    const message = await refusalOf('gateway.replicaCount', 'two');
    expect(message).toContain("values don't meet the specifications of the schema");
    expect(message).toContain('gateway.replicaCount: Invalid type. Expected: integer, given: string');
  });

  it('when a key is unknown (a typo), then the install fails naming the key and where it was', async () => {
    const message = await refusalOf('operator.replicas', '3');
    expect(message).toContain('operator: Additional property replicas is not allowed');
  });

  it('when a top-level key is unknown, then the install fails naming it', async () => {
    const message = await refusalOf('domian', 'couch.example.com');
    expect(message).toContain('Additional property domian is not allowed');
  });

  it('when a value is outside its allowed set, then the install fails listing the allowed values', async () => {
    const message = await refusalOf('logLevel', 'verbose');
    expect(message).toContain(
      'logLevel: logLevel must be one of the following: "error", "warn", "info", "debug"',
    );
  });

  it('when a quantity, a duration or a CIDR is malformed, then the install fails naming that field', async () => {
    expect(await refusalOf('freeEnvelope.cpu', 'lots')).toContain('freeEnvelope.cpu: Does not match pattern');
    expect(await refusalOf('gateway.wake.timeout', '15 seconds')).toContain(
      'gateway.wake.timeout: Does not match pattern',
    );
    expect(await refusalOf('operator.leaderElection.leaseDuration', '1500ms')).toContain(
      'operator.leaderElection.leaseDuration: Does not match pattern',
    );
    expect(await refusalOf('queue.ssrfAllowlist[0]', '10.0.0.1')).toContain(
      'queue.ssrfAllowlist.0: Does not match pattern',
    );
    expect(await refusalOf('gateway.trustedProxies[0]', '10.244.0.1')).toContain(
      'gateway.trustedProxies.0: Does not match pattern',
    );
    expect(await refusalOf('gateway.upstream.headersTimeout', '5 minutes')).toContain(
      'gateway.upstream.headersTimeout: Does not match pattern',
    );
  });

  it('when a queue timing is outside what the gateway accepts at start, then the install fails naming it instead of the pods crash-looping', async () => {
    expect(await refusalOf('queue.scheduleClaimLeaseMs', '100')).toContain(
      'queue.scheduleClaimLeaseMs: Must be greater than or equal to 300',
    );
    expect(await refusalOf('queue.scheduleClaimLeaseMs', '120000')).toContain(
      'queue.scheduleClaimLeaseMs: Must be less than or equal to 60000',
    );
    expect(await refusalOf('queue.delayWakeups', 'sometimes')).toContain(
      'queue.delayWakeups: Invalid type. Expected: boolean, given: string',
    );
  });

  it('when helm lint --strict meets a wrong value, then lint fails with the same message', async () => {
    const result = await helm(['lint', '--strict', CHART_DIR, '--set', 'operator.replicas=3']);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain('operator: Additional property replicas is not allowed');
  });
});
