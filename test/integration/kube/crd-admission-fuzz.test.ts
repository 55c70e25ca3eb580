import fc from 'fast-check';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { SETTEE_API_VERSION, SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import { COUCH_BACKUP_KIND, COUCH_BACKUP_PLURAL } from '../../../api/couch-backup.js';
import { COUCH_INSTANCE_KIND, COUCH_INSTANCE_PLURAL } from '../../../api/couch-instance.js';
import { QUEUE_BINDING_KIND, QUEUE_BINDING_PLURAL } from '../../../api/queue-binding.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { FuzzCaseCounter } from '../../helpers/fuzz/http-fuzz.js';

/** Manifests per kind: the API server answers each in milliseconds, the shrinking is what costs. */
const RUNS_PER_KIND = 40;
/** Updates per kind: each is a read, a replace and a read back. */
const UPDATE_RUNS_PER_KIND = 25;
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

/** An object of the named fields, each any value or absent. */
function fieldsOf(names: readonly string[]): fc.Arbitrary<Record<string, unknown>> {
  return fc.record(Object.fromEntries(names.map((n) => [n, anyValue])), { requiredKeys: [] });
}

/** A field that is usually an object of its own fields, sometimes any value. */
const objectOr = (fields: fc.Arbitrary<Record<string, unknown>>) => fc.oneof(fields, anyValue);

/** The CRD's fields as crds/couchinstance.yaml nests them (add-ons under addons). */
const couchSpec = specOf({
  plan: fc.oneof(fc.constantFrom('free', 'paid'), anyValue),
  version: anyValue,
  image: anyValue,
  keepAlive: anyValue,
  hibernation: objectOr(fieldsOf(['idleAfter'])),
  storage: objectOr(fieldsOf(['size', 'storageClassName'])),
  addons: objectOr(
    fc.record(
      {
        largerStorage: objectOr(fieldsOf(['size'])),
        backups: objectOr(fieldsOf(['schedule', 'retain', 'storageSecret'])),
        regionPinning: objectOr(fieldsOf(['region'])),
      },
      { requiredKeys: [] },
    ),
  ),
  resources: objectOr(
    fc.record(
      { requests: objectOr(fieldsOf(['cpu', 'memory'])), limits: objectOr(fieldsOf(['cpu', 'memory'])) },
      { requiredKeys: [] },
    ),
  ),
  restore: objectOr(fieldsOf(['backup', 'instance', 'before'])),
});

const bindingSpec = specOf({
  engine: fc.oneof(fc.constantFrom('redis', 'valkey'), anyValue),
  connection: objectOr(
    fc.record(
      {
        host: anyValue,
        port: anyValue,
        tls: anyValue,
        db: anyValue,
        passwordSecretRef: objectOr(fieldsOf(['name', 'key'])),
      },
      { requiredKeys: [] },
    ),
  ),
  plan: fc.oneof(fc.constantFrom('free', 'paid'), anyValue),
  limits: objectOr(
    fieldsOf([
      'maxDelay',
      'maxTimeout',
      'deduplicationWindow',
      'deadLetterRetention',
      'maxDeadLetters',
      'eventRetention',
      'maxEvents',
      'workflowRunRetention',
      'maxWorkflowRuns',
      'maxWorkflowSteps',
      'maxWorkflowContextBytes',
      'maxQueues',
      'maxQueueParallelism',
      'maxSchedules',
      'maxUrlGroups',
      'maxUrlGroupEndpoints',
      'maxMessagesPerDay',
      'maxRequestsPerSecond',
    ]),
  ),
});

const backupSpec = specOf({
  instance: fc.oneof(fc.constantFrom('alpha', 'beta'), anyValue),
  trigger: fc.oneof(fc.constantFrom('Manual', 'Scheduled', 'Hibernation'), anyValue),
});

type Spec = Record<string, unknown>;

interface StoredObject {
  metadata: { resourceVersion?: string };
  spec: Spec;
}

/**
 * Each kind with a spec its CRD accepts (the object updates start from) and what an accepted
 * update must have kept: the fields the CRD's transition rules (oldSelf) fix once created.
 */
const KINDS: ReadonlyArray<{
  kind: string;
  plural: string;
  spec: fc.Arbitrary<Spec>;
  valid: Spec;
  fixed: (spec: Spec) => unknown[];
}> = [
  {
    kind: COUCH_INSTANCE_KIND,
    plural: COUCH_INSTANCE_PLURAL,
    spec: couchSpec,
    valid: { plan: 'paid', storage: { size: '1Gi', storageClassName: 'fast' } },
    fixed: (spec: Spec) => [(spec.storage as Spec | undefined)?.storageClassName ?? '', spec.restore],
  },
  {
    kind: QUEUE_BINDING_KIND,
    plural: QUEUE_BINDING_PLURAL,
    spec: bindingSpec,
    valid: {
      engine: 'redis',
      connection: { host: '127.0.0.1', port: 6379, passwordSecretRef: { name: 'auth', key: 'password' } },
    },
    fixed: () => [],
  },
  {
    kind: COUCH_BACKUP_KIND,
    plural: COUCH_BACKUP_PLURAL,
    spec: backupSpec,
    valid: { instance: 'alpha', trigger: 'Manual' },
    // The whole spec is immutable.
    fixed: (spec: Spec) => [spec],
  },
];

/**
 * The CRDs' admission, fuzzed against the real API server: random CouchInstance, QueueBinding and
 * CouchBackup manifests (fields of the wrong type, out of range, unknown, huge), created and put
 * over an existing object. Each is either stored or refused with a 4xx naming the problem, never a
 * 5xx; a refused create is not there afterwards, a refused update left the object as it was (its
 * resourceVersion), and a stored update kept what the CRD's transition rules fix.
 */
describe('CRD admission under fuzzed manifests', () => {
  const namespace = useTestNamespace('crd-fuzz');
  const counter = new FuzzCaseCounter();
  const api = () => testControlPlane().kubeConfig.makeApiClient(CustomObjectsApi);
  const refOf = (plural: string) => ({
    group: SETTEE_GROUP,
    version: SETTEE_VERSION,
    plural,
    namespace: namespace.name,
  });
  const statusOf = (call: Promise<unknown>): Promise<number> =>
    call.then(
      () => 200,
      (err: { code?: number }) => err.code ?? 0,
    );
  let seq = 0;

  afterAll(() => process.stdout.write(`${counter.report('CRD admission fuzz')}\n`));

  it.each(KINDS.map((k) => [k.kind, k] as const))(
    'when %s manifests with fuzzed specs are created, then each is stored or refused with a 4xx, and a refused one is absent',
    async (kind, { plural, spec }) => {
      const ref = refOf(plural);
      await fc.assert(
        fc.asyncProperty(spec, async (body) => {
          counter.count(`create ${kind}`);
          const name = `fuzz-${(seq += 1)}`;
          const status = await statusOf(
            api().createNamespacedCustomObject({
              ...ref,
              body: { apiVersion: SETTEE_API_VERSION, kind, metadata: { name }, spec: body },
            }),
          );
          counter.answered(status);
          expect([name, status >= 200 && status < 500]).toEqual([name, true]);
          if (status >= 400) {
            const after = await statusOf(api().getNamespacedCustomObject({ ...ref, name }));
            expect([name, after]).toEqual([name, 404]);
          } else {
            await api().deleteNamespacedCustomObject({ ...ref, name });
          }
        }),
        { numRuns: RUNS_PER_KIND, seed: SEED, endOnFailure: true },
      );
    },
  );

  it.each(KINDS.map((k) => [k.kind, k] as const))(
    'when an existing %s is replaced with fuzzed specs, then each is stored or refused with a 4xx: a refused one leaves the object as it was, a stored one keeps what its CRD fixes',
    async (kind, { plural, spec, valid, fixed }) => {
      const ref = refOf(plural);
      const name = `update-${kind.toLowerCase()}`;
      await api().createNamespacedCustomObject({
        ...ref,
        body: { apiVersion: SETTEE_API_VERSION, kind, metadata: { name }, spec: valid },
      });
      const read = async () => (await api().getNamespacedCustomObject({ ...ref, name })) as StoredObject;
      await fc.assert(
        fc.asyncProperty(spec, async (body) => {
          counter.count(`update ${kind}`);
          const before = await read();
          const status = await statusOf(
            api().replaceNamespacedCustomObject({ ...ref, name, body: { ...before, spec: body } }),
          );
          counter.answered(status);
          const sent = JSON.stringify(body);
          expect([sent, status >= 200 && status < 500]).toEqual([sent, true]);
          const after = await read();
          if (status >= 400)
            expect([sent, after.metadata.resourceVersion]).toEqual([sent, before.metadata.resourceVersion]);
          else expect([sent, fixed(after.spec)]).toEqual([sent, fixed(before.spec)]);
        }),
        { numRuns: UPDATE_RUNS_PER_KIND, seed: SEED, endOnFailure: true },
      );
    },
  );
});
