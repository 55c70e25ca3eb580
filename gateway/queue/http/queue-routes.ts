import { Ajv, type JSONSchemaType } from 'ajv';
import type { ApiHandler } from './api-request.js';
import type { ApiRoute } from './api-router.js';
import type { QueueTarget } from '../core/binding-registry.js';
import { InvalidRequestError, ResourceNotFoundError } from '../core/errors.js';
import { sendJson } from './json-response.js';
import { createMessage } from '../core/message.js';
import type { PublishReader } from './publish-routes.js';
import { readBody } from './read-body.js';
import { storeCall } from './store-call.js';
import { RateLimits } from '../stores/rate-limits.js';
import { answersOf, messagesOf } from './publish/fan-out.js';
import { quotasOf } from '../core/quotas.js';
import { validateResourceName } from '../core/resource-name.js';
import { slashedNameRoute } from './slashed-name-route.js';
import { toQStashQueue } from '../core/queue.js';
import type { QueueStore } from '../stores/queue-store.js';

const MAX_UPSERT_BODY_BYTES = 65_536;

interface UpsertBody {
  queueName: string;
  parallelism?: number;
  paused?: boolean;
}

const upsertSchema: JSONSchemaType<UpsertBody> = {
  type: 'object',
  properties: {
    queueName: { type: 'string' },
    parallelism: { type: 'integer', nullable: true, minimum: 1 },
    paused: { type: 'boolean', nullable: true },
  },
  required: ['queueName'],
  additionalProperties: false,
};
const validateUpsertBody = new Ajv({ allErrors: false, strict: true }).compile(upsertSchema);

function parseUpsertBody(raw: Buffer): UpsertBody {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new InvalidRequestError('the body is not valid JSON');
  }
  if (!validateUpsertBody(parsed)) {
    const error = validateUpsertBody.errors?.[0];
    const where = error?.instancePath ? error.instancePath.replace(/^\//, '') : 'the body';
    throw new InvalidRequestError(`${where} ${error?.message ?? 'is not valid'}`);
  }
  return parsed;
}

/**
 * QStash's queues (`client.queue({queueName}).*`):
 *   POST   /v2/queues                       upsert `{queueName, parallelism?, paused?}` (200)
 *   GET    /v2/queues                       every queue, by name
 *   GET    /v2/queues/{name}                one, or 404
 *   DELETE /v2/queues/{name}                delete it (200 also when missing, as QStash documents)
 *   POST   /v2/queues/{name}/pause, resume  (200, or 404)
 *   POST   /v2/enqueue/{name}/{destination} enqueue one message (or one per URL group endpoint),
 *                                           creating the queue when missing
 */
export function queueRoutes(options: {
  queuesOf: (target: QueueTarget) => QueueStore;
  readPublish: PublishReader;
}): ApiRoute[] {
  const { queuesOf, readPublish } = options;

  const setPaused =
    (paused: boolean): ApiHandler =>
    async ({ res, target, params }) => {
      const name = validateResourceName(params.name, 'queue name');
      const quota = quotasOf(target);
      const exists = await storeCall(paused ? 'pause the queue' : 'resume the queue', () =>
        queuesOf(target).upsert(name, { paused, create: false }, quota),
      );
      if (!exists) throw new ResourceNotFoundError(`queue ${name} not found`);
      sendJson(res, 200, {});
    };

  const enqueue: ApiHandler = async ({ req, res, target, params, callerIp, redis, keys }) => {
    const name = validateResourceName(params.queue, 'queue name');
    const plan = await readPublish({ req, callerIp, target, destination: params.destination! });
    // A message with a flow-control key passes its queue, then its key (admit-flow-control-entry.ts).
    // Object.assign rather than a spread followed by a property: several times cheaper on Node 20.
    const messages = messagesOf([plan]).map((request) =>
      createMessage(Object.assign({}, request, { queueName: name })),
    );
    const taken = await storeCall('count the messages', () =>
      new RateLimits(redis, keys, target.limits).takeMessages(messages.length),
    );
    // What was not stored new (a duplicate; all of them when refused or not stored) is given back.
    const answers = await storeCall('store the message', () =>
      queuesOf(target).enqueue(name, messages, {
        deduplicationWindowMs: target.limits.deduplicationWindowMs,
        quota: quotasOf(target),
      }),
    ).catch(async (err: unknown) => {
      await taken.giveBack(messages.length);
      throw err;
    });
    await taken.giveBack(answers.filter((a) => a.deduplicated).length);
    sendJson(res, answers.every((a) => a.deduplicated) ? 202 : 201, answersOf([plan], answers)[0]);
  };

  return [
    {
      path: 'queues',
      methods: {
        GET: async ({ res, target }) => {
          const queues = await storeCall('list the queues', () => queuesOf(target).list());
          sendJson(
            res,
            200,
            queues.map((q) => toQStashQueue(q.name, q.record, q.lag)),
          );
        },
        POST: async ({ req, res, target }) => {
          const body = parseUpsertBody(await readBody(req, MAX_UPSERT_BODY_BYTES));
          const name = validateResourceName(body.queueName, 'queueName');
          const quota = quotasOf(target);
          const parallelism = body.parallelism ?? 1;
          // A 400, not a 412: QStash's upsert documents 412 only for the number of queues
          // (docs/queue.md, Quotas), and a parallelism above the limit is bad input for this binding.
          if (parallelism > quota.maxParallelism)
            throw new InvalidRequestError(
              `parallelism ${parallelism} is above the binding's limit of ${quota.maxParallelism} (QueueBinding spec.limits.maxQueueParallelism, or the operator's default)`,
            );
          await storeCall('store the queue', () =>
            queuesOf(target).upsert(name, { parallelism, paused: body.paused ?? false, create: true }, quota),
          );
          sendJson(res, 200, {});
        },
      },
    },
    {
      path: 'queues/:name',
      methods: {
        GET: async ({ res, target, params }) => {
          const name = validateResourceName(params.name, 'queue name');
          const queue = await storeCall('read the queue', () => queuesOf(target).get(name));
          if (!queue) throw new ResourceNotFoundError(`queue ${name} not found`);
          sendJson(res, 200, toQStashQueue(name, queue.record, queue.lag));
        },
        DELETE: async ({ res, target, params }) => {
          const name = validateResourceName(params.name, 'queue name');
          await storeCall('delete the queue', () => queuesOf(target).delete(name));
          sendJson(res, 200, {});
        },
      },
    },
    { path: 'queues/:name/pause', methods: { POST: setPaused(true) } },
    { path: 'queues/:name/resume', methods: { POST: setPaused(false) } },
    slashedNameRoute('queues', 'queue name', { GET: [], DELETE: [], POST: ['pause', 'resume'] }),
    { path: 'enqueue/:queue/*destination', methods: { POST: enqueue } },
  ];
}
