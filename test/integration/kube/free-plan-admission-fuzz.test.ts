import { CustomObjectsApi } from '@kubernetes/client-node';
import fc from 'fast-check';
import { SETTEE_API_VERSION, SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import { COUCH_INSTANCE_KIND, COUCH_INSTANCE_PLURAL } from '../../../api/couch-instance.js';
import { toKubeApiError } from '../../../kube/errors.js';
import { FuzzCaseCounter } from '../../helpers/fuzz/http-fuzz.js';
import { replaceCouchInstanceStatus } from '../../helpers/gateway/gateway-harness.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { waitFor } from '../../../local/wait.js';

const CREATE_RUNS = 80;
const UPDATE_RUNS = 50;
const SEED = Number(process.env.FUZZ_SEED ?? 29);
const BOUNDED = { seed: SEED, endOnFailure: true } as const;

/**
 * The free plan as docs/couchinstance.md and docs/free-envelope.md state it, with the figures the
 * test control plane installs (the chart's defaults), written here apart from the CEL and its
 * TypeScript twin in api/couch-instance-rules.ts: on plan free (or no plan) no keepAlive and no
 * add-on, cpu at most 1 and memory at most 1Gi for requests and limits; on any plan storage.size at
 * most 1Gi and a request not above its limit; paid -> free only while status.usage (as measured)
 * holds at most 1Gi and 20 databases.
 */
const FREE = { storage: '1Gi', cpu: '1', memory: '1Gi', storageBytes: 2 ** 30, databases: 20 } as const;

/** A quantity as an exact fraction [numerator, denominator] (Kubernetes' grammar: decimal, SI, binary or exponent). */
function quantity(text: string): [bigint, bigint] {
  const match = /^\+?(\d*)(?:\.(\d*))?(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/.exec(text);
  if (!match) throw new Error(`not a quantity: ${text}`);
  const [, whole = '', fraction = '', suffix = ''] = match;
  let numerator = BigInt(`${whole}${fraction}` || '0');
  let denominator = 10n ** BigInt(fraction.length);
  const binary = ['Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'].indexOf(suffix);
  const decimal = ['k', 'M', 'G', 'T', 'P', 'E'].indexOf(suffix);
  if (binary >= 0) numerator *= 1024n ** BigInt(binary + 1);
  else if (decimal >= 0) numerator *= 1000n ** BigInt(decimal + 1);
  else if (suffix === 'm') denominator *= 1000n;
  else if (suffix) {
    const exponent = Number(suffix.slice(1));
    if (exponent >= 0) numerator *= 10n ** BigInt(exponent);
    else denominator *= 10n ** BigInt(-exponent);
  }
  return [numerator, denominator];
}

const atMost = (value: string, limit: string): boolean => {
  const [a, b] = quantity(value);
  const [c, d] = quantity(limit);
  return a * d <= c * b;
};

interface Spec {
  plan?: string;
  keepAlive?: boolean;
  storage?: { size?: string };
  addons?: Record<string, unknown>;
  resources?: Partial<Record<'requests' | 'limits', Partial<Record<'cpu' | 'memory', string>>>>;
}

interface Usage {
  storageBytes?: number;
  databases?: number;
}

/** The fields of `spec` outside what its plan allows, each as the API path a refusal should name. */
function outsideThePlan(spec: Spec): string[] {
  const broken: string[] = [];
  const free = spec.plan !== 'paid';
  if (free && spec.keepAlive === true) broken.push('spec.keepAlive');
  for (const addon of Object.keys(spec.addons ?? {})) if (free) broken.push(`spec.addons.${addon}`);
  if (spec.storage?.size !== undefined && !atMost(spec.storage.size, FREE.storage))
    broken.push('spec.storage.size');
  for (const kind of ['requests', 'limits'] as const)
    for (const resource of ['cpu', 'memory'] as const) {
      const value = spec.resources?.[kind]?.[resource];
      if (free && value !== undefined && !atMost(value, FREE[resource]))
        broken.push(`spec.resources.${kind}.${resource}`);
    }
  for (const resource of ['cpu', 'memory'] as const) {
    const request = spec.resources?.requests?.[resource];
    const limit = spec.resources?.limits?.[resource];
    if (request !== undefined && limit !== undefined && !atMost(request, limit))
      broken.push(`spec.resources.requests.${resource}`);
  }
  return broken;
}

/** paid -> free while the last measured usage is above the free figures. */
function planMoveRefused(oldSpec: Spec, spec: Spec, usage: Usage | undefined): boolean {
  const movesToFree = oldSpec.plan === 'paid' && spec.plan !== 'paid';
  const over = (usage?.storageBytes ?? 0) > FREE.storageBytes || (usage?.databases ?? 0) > FREE.databases;
  return movesToFree && over;
}

const cpu = fc.constantFrom(
  '100m',
  '500m',
  '999m',
  '1',
  '1000m',
  '1001m',
  '1.5',
  '2',
  '0.999',
  '1e0',
  '10e-1',
  '11e-1',
);
const memory = fc.constantFrom(
  '256Mi',
  '1023Mi',
  '1Gi',
  '1024Mi',
  '1025Mi',
  '1073741824',
  '1073741825',
  '1G',
  '1.5Gi',
  '2Gi',
  '1048576Ki',
  '1048577Ki',
);
const size = fc.constantFrom(
  '512Mi',
  '1Gi',
  '1024Mi',
  '1025Mi',
  '1073741825',
  '1G',
  '1.1G',
  '2Gi',
  '1Ti',
  '0.5Gi',
);
const amounts = fc.record({ cpu, memory }, { requiredKeys: [] });

/** Specs around the free/paid boundary: every value well-formed, so only the plan's rules decide. */
const spec: fc.Arbitrary<Spec> = fc.record(
  {
    plan: fc.constantFrom('free', 'paid'),
    keepAlive: fc.boolean(),
    storage: fc.record({ size }),
    addons: fc.record(
      {
        largerStorage: fc.constant({ size: '5Gi' }),
        backups: fc.constant({ schedule: '0 3 * * *' }),
        regionPinning: fc.constant({ region: 'eu-west' }),
      },
      { requiredKeys: [] },
    ),
    resources: fc.record({ requests: amounts, limits: amounts }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);

/** As often as the others, specs the rules above accept (most random specs break one of them). */
const withinThePlan = spec.filter((s) => outsideThePlan(s).length === 0);
/** Within the free plan: what a paid instance over the free figures may not move to. */
const withinFree = withinThePlan.filter((s) => s.plan !== 'paid');

/** Measured usage around the free figures, or none yet. */
const usage: fc.Arbitrary<Usage | undefined> = fc.option(
  fc.record(
    {
      storageBytes: fc.constantFrom(
        0,
        FREE.storageBytes - 1,
        FREE.storageBytes,
        FREE.storageBytes + 1,
        5 * 2 ** 30,
      ),
      databases: fc.constantFrom(0, FREE.databases, FREE.databases + 1, 400),
    },
    { requiredKeys: [] },
  ),
  { freq: 4 },
);

interface Refusal {
  status: number;
  message: string;
  fields: string[];
}

/**
 * The free plan's admission (the CRD's CEL rules and the free-plan-change ValidatingAdmissionPolicy
 * that the test control plane installs with the chart's default figures) fuzzed against the real
 * API server with specs and measured usage around the free/paid boundary. Whatever is sent: a
 * refusal is a 422 that names each field the plan's documented rules say is outside (the field or
 * its parent in the causes; `plan` in the policy's message for a paid -> free move), nothing is
 * stored by a refused create or update (read back), what is accepted is what those rules accept,
 * and every stored object is within its plan.
 */
describe('the free plan admission under fuzzed specs', () => {
  const namespace = useTestNamespace('free-fuzz');
  const { kubeConfig } = testControlPlane();
  const api = () => kubeConfig.makeApiClient(CustomObjectsApi);
  const counter = new FuzzCaseCounter();
  const ref = () => ({
    group: SETTEE_GROUP,
    version: SETTEE_VERSION,
    plural: COUCH_INSTANCE_PLURAL,
    namespace: namespace.name,
  });
  let seq = 0;

  afterAll(() => process.stdout.write(`${counter.report('free plan admission fuzz')}\n`));

  const body = (name: string, s: Spec) => ({
    apiVersion: SETTEE_API_VERSION,
    kind: COUCH_INSTANCE_KIND,
    metadata: { name },
    spec: s,
  });

  /** undefined when the API server took it, else its refusal. */
  async function refusalOf(call: Promise<unknown>): Promise<Refusal | undefined> {
    try {
      await call;
      return undefined;
    } catch (err) {
      const apiError = toKubeApiError(err);
      if (!apiError) throw err;
      return {
        status: apiError.statusCode,
        message: apiError.message,
        fields: apiError.causes.map((c) => c.field ?? ''),
      };
    }
  }

  const read = async (name: string) =>
    (await api().getNamespacedCustomObject({ ...ref(), name })) as {
      metadata: { resourceVersion: string };
      spec: Spec;
      status?: { usage?: Usage };
    };

  /** Each broken field is named by a cause: itself or a parent below spec. */
  const unnamed = (refusal: Refusal, broken: readonly string[]): string[] =>
    broken.filter(
      (field) => !refusal.fields.some((f) => f !== 'spec' && (field === f || field.startsWith(`${f}.`))),
    );

  // installFreePlanChangePolicy waits for the policy's type-check only; the admission plugin takes
  // the binding and its params a moment later (longer on a loaded machine), and until then a paid ->
  // free move over the figures would be stored. Wait until a known-refused move is refused.
  beforeAll(async () => {
    const name = 'policy-ready';
    await api().createNamespacedCustomObject({ ...ref(), body: body(name, { plan: 'paid' }) });
    await replaceCouchInstanceStatus(
      kubeConfig,
      { namespace: namespace.name, name },
      { usage: { databases: FREE.databases + 1 } },
    );
    await waitFor(
      'the free-plan-change policy to refuse paid -> free over the figures',
      async () => {
        const before = await read(name);
        if (before.spec.plan !== 'paid')
          await api().replaceNamespacedCustomObject({
            ...ref(),
            name,
            body: { ...before, spec: { plan: 'paid' } },
          });
        const current = await read(name);
        const refusal = await refusalOf(
          api().replaceNamespacedCustomObject({
            ...ref(),
            name,
            body: { ...current, spec: { plan: 'free' } },
          }),
        );
        return refusal?.status === 422 && /\bplan: free\b/.test(refusal.message) ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    await api().deleteNamespacedCustomObject({ ...ref(), name });
  }, 90_000);

  it('when CouchInstances are created with specs around the free/paid boundary, then each is stored exactly when within its plan, and a refusal is a 422 naming every field outside it, with nothing stored', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(spec, withinThePlan), async (s) => {
        const name = `create-${(seq += 1)}`;
        const broken = outsideThePlan(s);
        counter.count(broken.length === 0 ? 'create within the plan' : 'create outside the plan');
        const refusal = await refusalOf(
          api().createNamespacedCustomObject({ ...ref(), body: body(name, s) }),
        );
        counter.answered(refusal?.status ?? 201);
        const said = [JSON.stringify(s), broken, refusal];
        if (refusal === undefined) {
          expect([...said, broken]).toEqual([...said, []]);
          const stored = await read(name);
          expect([...said, outsideThePlan(stored.spec)]).toEqual([...said, []]);
          await api().deleteNamespacedCustomObject({ ...ref(), name });
          return;
        }
        expect([...said, refusal.status, broken.length > 0]).toEqual([...said, 422, true]);
        expect([...said, unnamed(refusal, broken)]).toEqual([...said, []]);
        const after = await refusalOf(api().getNamespacedCustomObject({ ...ref(), name }));
        expect([...said, after?.status]).toEqual([...said, 404]);
      }),
      { numRuns: CREATE_RUNS, ...BOUNDED },
    );
  }, 300_000);

  it('when an instance with measured usage around the free figures is replaced with specs around the boundary, then a paid -> free move over the figures and a spec outside its plan are refused naming the field, with the object as it was; anything else is stored', async () => {
    const start = fc.record({ plan: fc.constantFrom('paid', 'paid', 'free') });
    await fc.assert(
      fc.asyncProperty(start, usage, fc.oneof(spec, withinThePlan, withinFree), async (old, measured, s) => {
        const name = `update-${(seq += 1)}`;
        await api().createNamespacedCustomObject({ ...ref(), body: body(name, old) });
        if (measured)
          await replaceCouchInstanceStatus(
            kubeConfig,
            { namespace: namespace.name, name },
            { usage: measured },
          );
        const before = await read(name);
        const broken = outsideThePlan(s);
        const moveRefused = planMoveRefused(old, s, measured);
        counter.count(
          moveRefused && broken.length === 0
            ? 'update paid -> free over the figures (the policy alone refuses)'
            : moveRefused
              ? 'update paid -> free over the figures, spec outside too'
              : broken.length > 0
                ? 'update outside the plan'
                : 'update within the plan',
        );
        const refusal = await refusalOf(
          api().replaceNamespacedCustomObject({ ...ref(), name, body: { ...before, spec: s } }),
        );
        counter.answered(refusal?.status ?? 200);
        const said = [
          JSON.stringify(old),
          JSON.stringify(measured),
          JSON.stringify(s),
          broken,
          moveRefused,
          refusal,
        ];
        const after = await read(name);
        if (refusal === undefined) {
          expect([...said, broken, moveRefused]).toEqual([...said, [], false]);
          expect([...said, outsideThePlan(after.spec)]).toEqual([...said, []]);
        } else {
          expect([...said, refusal.status, broken.length > 0 || moveRefused]).toEqual([...said, 422, true]);
          expect([...said, unnamed(refusal, broken)]).toEqual([...said, []]);
          // The CRD's rules are checked before the admission policy runs, so its message comes alone.
          if (moveRefused && broken.length === 0)
            expect([...said, /\bplan: free\b/.test(refusal.message)]).toEqual([...said, true]);
          expect([...said, after.metadata.resourceVersion]).toEqual([
            ...said,
            before.metadata.resourceVersion,
          ]);
        }
        await api().deleteNamespacedCustomObject({ ...ref(), name });
      }),
      { numRuns: UPDATE_RUNS, ...BOUNDED },
    );
  }, 300_000);
});
