import fc from 'fast-check';
import {
  adversarialBody,
  adversarialHeaders,
  adversarialQuery,
  adversarialSegment,
} from '../fuzz/http-fuzz.js';

/**
 * Requests aimed at the workflow routes and at the runs a test set up: each param, query value and
 * header is one of the runs' own values (ids, dlqIds, events, URLs, labels, times) most of the
 * time, or that value mangled, or an adversarial one; bodies the route's own or adversarial.
 */

/** The values of the runs set up, read when a test begins. */
export interface FuzzTargets {
  /**
   * Calm: each value exactly one of the runs', the route's own query, headers and body with none
   * adversarial, so a request reaches the state change it aims at; else every part may be mangled.
   */
  calm: boolean;
  runIds: string[];
  dlqIds: string[];
  events: string[];
  urls: string[];
  labels: string[];
  createdAts: string[];
  cursors: string[];
  userId: string;
}

/** A value of the runs', or one mangled the ways a client gets an id wrong. */
export function aimed(t: Calm, values: readonly string[]): fc.Arbitrary<string> {
  const value = fc.constantFrom(...(values.length > 0 ? values : ['none']));
  if (t.calm) return value;
  return fc.oneof(
    { arbitrary: value, weight: 10 },
    fc
      .tuple(value, fc.constantFrom('x', ' ', '\u0000', '/', '..', '\u00e9', ',', '%'))
      .map(([v, s]) => v + s),
    value.map((v) => v.toUpperCase()),
    value.map((v) => v.slice(0, -1)),
    value.map((v) => `${v},${v}`),
    fc.string({ maxLength: 30 }),
  );
}

/** A path segment: an aimed value percent-encoded, or an adversarial segment as sent. */
export const segment = (t: Calm, values: readonly string[]) =>
  t.calm
    ? aimed(t, values).map(encodeURIComponent)
    : fc.oneof({ arbitrary: aimed(t, values).map(encodeURIComponent), weight: 5 }, adversarialSegment);

export type Params = Record<string, fc.Arbitrary<string>>;
export type Calm = Pick<FuzzTargets, 'calm'>;

/** A query of the route's parameters with aimed values, a name repeated now and then, and adversarial ones. */
export function query(t: Calm, params: Params): fc.Arbitrary<string> {
  const names = Object.keys(params);
  return fc
    .tuple(
      fc.array(
        fc.constantFrom(...names).chain((name) => params[name]!.map((value) => [name, value] as const)),
        { maxLength: 3 },
      ),
      t.calm ? fc.constant('') : fc.oneof({ arbitrary: fc.constant(''), weight: 3 }, adversarialQuery(names)),
    )
    .map(([pairs, tail]) => {
      const aimedPart = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
      const rest = tail.replace(/^\?/, '');
      const all = [aimedPart, rest].filter((p) => p !== '').join('&');
      return all === '' ? '' : `?${all}`;
    });
}

export const counts = fc.oneof(
  fc.constantFrom('1', '2', '3', '100', '1000', '1001', '0', '-1'),
  fc.nat().map(String),
);
export const times = (t: FuzzTargets) =>
  fc.oneof(aimed(t, t.createdAts), fc.constantFrom('0', String(Date.now())));
export const states = fc.constantFrom(
  'RUN_STARTED',
  'RUN_SUCCESS',
  'RUN_FAILED',
  'RUN_CANCELED',
  'run_started',
  '',
);
export const callbackStates = fc.constantFrom(
  'CALLBACK_FAIL',
  'CALLBACK_SUCCESS',
  'CALLBACK_INPROGRESS',
  'x',
);
/** The Upstash-* headers the DLQ actions read, and those a trigger carries. */
export const DLQ_HEADERS = [
  'Upstash-Retries',
  'Upstash-Retry-Delay',
  'Upstash-Delay',
  'Upstash-Timeout',
  'Upstash-Label',
  'Upstash-Flow-Control-Key',
  'Upstash-Flow-Control-Value',
  'Upstash-Failure-Callback',
  'Upstash-Callback',
  'Upstash-Workflow-RunId',
];
export const WORKFLOW_HEADERS = [
  'Upstash-Workflow-Init',
  'Upstash-Workflow-RunId',
  'Upstash-Workflow-Url',
  'Upstash-Workflow-Sdk-Version',
  'Upstash-Feature-Set',
  'Upstash-Retries',
  'Upstash-Label',
  'Upstash-Delay',
  'Upstash-Forward-X-Test',
  'Content-Type',
];

/** Aimed headers (each optional) merged with adversarial ones of `names`. */
export function headers(
  t: Calm,
  own: Params,
  names: readonly string[],
): fc.Arbitrary<Record<string, string | string[]>> {
  const optional = Object.fromEntries(
    Object.entries(own).map(([k, v]) => [k, fc.option(v, { nil: undefined })]),
  );
  return fc
    .tuple(
      fc.record(optional),
      t.calm
        ? fc.constant({})
        : fc.oneof({ arbitrary: fc.constant({}), weight: 2 }, adversarialHeaders(names)),
    )
    .map(([mine, adversarial]) => {
      const merged: Record<string, string | string[]> = { ...adversarial };
      for (const [k, v] of Object.entries(mine)) if (v !== undefined) merged[k] = v;
      return merged;
    });
}

/** A route's own body most of the time, else an adversarial one. */
export const bodyOr = (t: Calm, own: fc.Arbitrary<Buffer>) =>
  t.calm
    ? own.map((b): Buffer | undefined => b)
    : fc.oneof({ arbitrary: own.map((b): Buffer | undefined => b), weight: 2 }, adversarialBody);

/** A body of a route that reads none: none when calm. */
export const bodyOf = (t: Calm) => (t.calm ? fc.constant(undefined) : adversarialBody);

export const json = (value: unknown) => Buffer.from(JSON.stringify(value));

/** A wait request as the SDK sends it, for one of the runs' URLs. */
export const waitBody = (t: FuzzTargets) =>
  fc
    .record({
      url: aimed(t, t.urls),
      timeout: fc.constantFrom('1h', '3600', 3600, '30d', '0', '-1s', 'x', ''),
      step: fc.record({
        stepId: fc.constantFrom(1, 3, 9, -1, 0),
        stepName: fc.constantFrom('wait', 'other', ''),
        stepType: fc.constantFrom('Wait', 'Run', ''),
        concurrent: fc.constantFrom(1, 2),
      }),
    })
    .map(json);

/** A trigger's or a step's headers as the SDK publishes them, aimed at the runs. */
export const workflowHeaders = (t: FuzzTargets, runId: fc.Arbitrary<string>) =>
  headers(
    t,
    {
      'upstash-workflow-init': fc.constantFrom('true', 'false', 'TRUE', ''),
      'upstash-workflow-runid': runId,
      'upstash-workflow-url': aimed(t, t.urls),
      'upstash-workflow-sdk-version': fc.constantFrom('1', '2', ''),
      'content-type': fc.constantFrom('application/json', 'text/plain'),
    },
    WORKFLOW_HEADERS,
  );

export const freshRunId = fc.stringMatching(/^[a-z0-9]{4,12}$/).map((s) => `wfr_fzn-${s}`);
