import type { ApiHandler, ApiRequest } from './api-request.js';
import type { ApiRoute } from './api-router.js';
import { ConsumerLiveness } from '../stores/consumer-liveness.js';
import { InvalidRequestError, ResourceNotFoundError } from '../core/errors.js';
import { sendJson } from './json-response.js';
import { storeCall } from './store-call.js';
import { parsePeriodSeconds, parsePositiveInteger, validateFlowControlKey } from '../core/flow-control.js';
import { FlowControlStore, type FlowControlChange } from '../stores/flow-control-store.js';

function storeOf(request: ApiRequest): FlowControlStore {
  return new FlowControlStore(request.redis, request.keys);
}

function keyOf(request: ApiRequest): string {
  return validateFlowControlKey(request.params.key, 'flow-control key');
}

/** Only the query parameters `names` (the SDK's), each at most once. */
function queryOf(request: ApiRequest, names: readonly string[]): Map<string, string> {
  const values = new Map<string, string>();
  for (const name of new Set(request.query.keys())) {
    if (!names.includes(name))
      throw new InvalidRequestError(
        `unknown query parameter ${JSON.stringify(name)}; this route takes ${names.join(', ')}`,
      );
    const all = request.query.getAll(name);
    if (all.length > 1) throw new InvalidRequestError(`query parameter ${name} is given twice`);
    values.set(name, all[0]!);
  }
  return values;
}

/** `client.flowControl.pin(key, {parallelism?, rate?, period?})`: the period in seconds, as the SDK sends it. */
function pinChange(request: ApiRequest): FlowControlChange {
  const query = queryOf(request, ['parallelism', 'rate', 'period']);
  const parallelism = query.get('parallelism');
  const rate = query.get('rate');
  const period = query.get('period');
  if (parallelism === undefined && rate === undefined && period === undefined)
    throw new InvalidRequestError('pin needs parallelism, rate or period (query parameters)');
  return {
    change: 'pin',
    ...(parallelism !== undefined && { parallelism: parsePositiveInteger(parallelism, 'parallelism') }),
    ...(rate !== undefined && { rate: parsePositiveInteger(rate, 'rate') }),
    ...(period !== undefined && { periodSeconds: parsePeriodSeconds(period, 'period') }),
  };
}

function flag(value: string | undefined, name: string): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new InvalidRequestError(`query parameter ${name} must be true or false`);
}

/** `client.flowControl.unpin(key, {parallelism?, rate?})`: which pins to remove, as true/false. */
function unpinChange(request: ApiRequest): FlowControlChange {
  const query = queryOf(request, ['parallelism', 'rate']);
  const change = {
    change: 'unpin' as const,
    parallelism: flag(query.get('parallelism'), 'parallelism'),
    rate: flag(query.get('rate'), 'rate'),
  };
  if (!change.parallelism && !change.rate)
    throw new InvalidRequestError('unpin needs parallelism=true or rate=true (query parameters)');
  return change;
}

const changeKey =
  (what: string, changeOf: (request: ApiRequest) => FlowControlChange): ApiHandler =>
  async (request) => {
    const key = keyOf(request);
    const change = changeOf(request);
    const exists = await storeCall(what, () => storeOf(request).update(key, change));
    if (!exists) throw new ResourceNotFoundError(`flow-control key ${key} not found`);
    // The SDK reads no body (parseResponseAsJson: false); QStash's OpenAPI gives 200.
    sendJson(request.res, 200, {});
  };

/**
 * QStash's flow-control API (`client.flowControl.*`):
 *   GET  /v2/flowControl                    every key with its limits and counts, by name
 *   GET  /v2/flowControl/{key}              one key (FlowControlInfo), or 404
 *   POST /v2/flowControl/{key}/pause        its messages wait; creates the key when missing
 *   POST /v2/flowControl/{key}/resume       (404 when missing)
 *   POST /v2/flowControl/{key}/pin          ?parallelism&rate&period: fixed limits; creates the key
 *   POST /v2/flowControl/{key}/unpin        ?parallelism=true&rate=true (404 when missing)
 *   POST /v2/flowControl/{key}/resetRate    a new rate window now (404 when missing)
 *   GET  /v2/globalParallelism              deliveries in flight and the most the replicas run
 */
export function flowControlRoutes(): ApiRoute[] {
  const noQuery = (request: ApiRequest) => queryOf(request, []);
  return [
    {
      path: 'flowControl',
      methods: {
        GET: async (request) => {
          noQuery(request);
          const keys = await storeCall('list the flow-control keys', () => storeOf(request).list());
          sendJson(request.res, 200, keys);
        },
      },
    },
    {
      path: 'flowControl/:key',
      methods: {
        GET: async (request) => {
          const key = keyOf(request);
          noQuery(request);
          const info = await storeCall('read the flow-control key', () => storeOf(request).get(key));
          if (!info) throw new ResourceNotFoundError(`flow-control key ${key} not found`);
          sendJson(request.res, 200, info);
        },
      },
    },
    {
      path: 'flowControl/:key/pause',
      methods: { POST: changeKey('pause the flow-control key', (r) => (noQuery(r), { change: 'pause' })) },
    },
    {
      path: 'flowControl/:key/resume',
      methods: { POST: changeKey('resume the flow-control key', (r) => (noQuery(r), { change: 'resume' })) },
    },
    { path: 'flowControl/:key/pin', methods: { POST: changeKey('pin the flow-control key', pinChange) } },
    {
      path: 'flowControl/:key/unpin',
      methods: { POST: changeKey('unpin the flow-control key', unpinChange) },
    },
    {
      path: 'flowControl/:key/resetRate',
      methods: {
        POST: changeKey('reset the flow-control rate', (r) => (noQuery(r), { change: 'resetRate' })),
      },
    },
    {
      path: 'globalParallelism',
      methods: {
        GET: async (request) => {
          noQuery(request);
          const { redis, keys, config } = request;
          const liveness = new ConsumerLiveness(redis, keys);
          const [count, replicas] = await storeCall('read the deliveries in flight', () =>
            Promise.all([liveness.deliveriesInFlight(), liveness.liveConsumers(config.consumerLeaseMs)]),
          );
          // Settee has no plan-wide cap: the most in flight is what the live replicas' workers run.
          sendJson(request.res, 200, {
            parallelismMax: replicas * config.workerConcurrency,
            parallelismCount: count,
          });
        },
      },
    },
  ];
}
