import fc from 'fast-check';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { SETTEE_API_VERSION, SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import { COUCH_INSTANCE_KIND, COUCH_INSTANCE_PLURAL } from '../../../api/couch-instance.js';
import { QUEUE_BINDING_KIND } from '../../../api/queue-binding.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { FuzzCaseCounter } from '../../helpers/fuzz/http-fuzz.js';

/** Manifests per kind: the API server answers each in milliseconds, the shrinking is what costs. */
const RUNS_PER_KIND = 40;
const SEED = Number(process.env.FUZZ_SEED ?? 29);

/** Values a field may be given by mistake or malice: wrong types, out of range, huge, odd strings. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    '',
    '1m',
    '0s',
    '-1s',
    '999999h',
    '1Gi',
    '-1Gi',
    'free',
    'paid',
    'enterprise',
    '3.5.2',
    '* * * * *',
    'x'.repeat(5_000),
  ),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 20 }),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 3 }),
);

/** A spec of known field names (some nested as the CRD has them) and unknown ones, any values. */
function specOf(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  return fc.record({ ...fields, unknown: anyValue }, { requiredKeys: [] }) as fc.Arbitrary<
    Record<string, unknown>
  >;
}

const couchSpec = specOf({
  plan: fc.oneof(fc.constantFrom('free', 'paid'), anyValue),
  version: anyValue,
  image: anyValue,
  keepAlive: anyValue,
  hibernation: fc.oneof(fc.record({ idleAfter: anyValue }, { requiredKeys: [] }), anyValue),
  storage: fc.oneof(
    fc.record({ size: anyValue, storageClassName: anyValue }, { requiredKeys: [] }),
    anyValue,
  ),
  backups: fc.oneof(fc.record({ schedule: anyValue, retain: anyValue }, { requiredKeys: [] }), anyValue),
  resources: anyValue,
  regionPinning: anyValue,
  restore: anyValue,
});

const bindingSpec = specOf({
  engine: fc.oneof(fc.constantFrom('redis', 'valkey'), anyValue),
  connection: fc.oneof(
    fc.record(
      {
        host: anyValue,
        port: anyValue,
        tls: anyValue,
        db: anyValue,
        passwordSecretRef: fc.oneof(
          fc.record({ name: anyValue, key: anyValue }, { requiredKeys: [] }),
          anyValue,
        ),
      },
      { requiredKeys: [] },
    ),
    anyValue,
  ),
  limits: anyValue,
});

/**
 * The CRDs' admission, fuzzed against the real API server: random CouchInstance and QueueBinding
 * manifests (fields of the wrong type, out of range, unknown, huge). Each is either stored or
 * refused with a 4xx naming the problem, never a 5xx, and a refused one is not there afterwards.
 */
describe('CRD admission under fuzzed manifests', () => {
  const namespace = useTestNamespace('crd-fuzz');
  const counter = new FuzzCaseCounter();
  let seq = 0;

  afterAll(() => process.stdout.write(`${counter.report('CRD admission fuzz')}\n`));

  it.each([
    [COUCH_INSTANCE_KIND, COUCH_INSTANCE_PLURAL, couchSpec],
    [QUEUE_BINDING_KIND, 'queuebindings', bindingSpec],
  ] as const)(
    'when %s manifests with fuzzed specs are created, then each is stored or refused with a 4xx, and a refused one is absent',
    async (kind, plural, spec) => {
      const api = testControlPlane().kubeConfig.makeApiClient(CustomObjectsApi);
      const ref = { group: SETTEE_GROUP, version: SETTEE_VERSION, plural, namespace: namespace.name };
      await fc.assert(
        fc.asyncProperty(spec, async (body) => {
          counter.count(`create ${kind}`);
          const name = `fuzz-${(seq += 1)}`;
          const status = await api
            .createNamespacedCustomObject({
              ...ref,
              body: { apiVersion: SETTEE_API_VERSION, kind, metadata: { name }, spec: body },
            })
            .then(
              () => 201,
              (err: { code?: number }) => err.code ?? 0,
            );
          expect([name, status >= 200 && status < 500]).toEqual([name, true]);
          if (status >= 400) {
            const after = await api.getNamespacedCustomObject({ ...ref, name }).then(
              () => 200,
              (err: { code?: number }) => err.code ?? 0,
            );
            expect([name, after]).toEqual([name, 404]);
          } else {
            await api.deleteNamespacedCustomObject({ ...ref, name });
          }
        }),
        { numRuns: RUNS_PER_KIND, seed: SEED, endOnFailure: true },
      );
    },
  );
});
