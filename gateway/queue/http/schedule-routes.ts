import type { ApiRequest } from './api-request.js';
import type { ApiRoute } from './api-router.js';
import type { QueueTarget } from '../core/binding-registry.js';
import type { QueueConfig } from '../core/config.js';
import { validateDestination } from './publish/destination.js';
import { InvalidRequestError, ResourceNotFoundError } from '../core/errors.js';
import { sendJson } from './json-response.js';
import type { QueueMessage } from '../core/message.js';
import { parsePublishExtras } from './publish/publish-extras.js';
import {
  parsePublishHeaders,
  publishLimitsOf,
  sentHeaderNames,
  type HeaderBag,
} from './publish/publish-headers.js';
import { quotasOf } from '../core/quotas.js';
import { readBody } from './read-body.js';
import type { AddressPolicy } from '../core/address-policy.js';
import { storeCall } from './store-call.js';
import { callerIpField } from '../core/message-answer.js';
import { validateResourceName } from '../core/resource-name.js';
import { slashedNameRoute } from './slashed-name-route.js';
import { isUrlGroupName } from '../core/url-group.js';
import type { UrlGroupStore } from '../stores/url-group-store.js';
import { nextTick, parseCron } from '../core/cron.js';
import { EventLog } from '../stores/event-log.js';
import { lastScheduleStates } from '../stores/last-schedule-states.js';
import { newScheduleId, toQStashSchedule, type ScheduleRecord } from '../core/schedule.js';
import type { ScheduleStore, StoredSchedule } from '../stores/schedule-store.js';

/** Headers that make the schedule rather than its messages. */
const SCHEDULE_HEADERS = new Set(['upstash-cron', 'upstash-schedule-id', 'upstash-queue-name']);

function header(req: ApiRequest['req'], name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

function answer(schedule: StoredSchedule) {
  return toQStashSchedule(schedule.record, schedule.template, {
    last: schedule.lastTick,
    next: schedule.nextTick,
  });
}

/**
 * QStash's schedules (`client.schedules.*`):
 *   POST   /v2/schedules/{destination}   create, or replace the one named by Upstash-Schedule-Id
 *   GET    /v2/schedules                 every schedule
 *   GET    /v2/schedules/{id}            one, 404 when missing
 *   DELETE /v2/schedules/{id}            delete it (messages already fired stay queued)
 *   PATCH or POST /v2/schedules/{id}/pause and /resume (the SDK sends PATCH, the docs say POST)
 */
export function scheduleRoutes(options: {
  schedulesOf: (target: QueueTarget) => ScheduleStore;
  groupsOf: (target: QueueTarget) => UrlGroupStore;
  config: QueueConfig;
  policy: AddressPolicy;
  now?: () => number;
}): ApiRoute[] {
  const { schedulesOf, groupsOf, config, policy } = options;
  const now = options.now ?? Date.now;

  const create = async ({ req, res, target, params, callerIp }: ApiRequest): Promise<void> => {
    const destination = params.destination!;
    const cronText = header(req, 'upstash-cron');
    if (cronText === undefined)
      throw new InvalidRequestError('Upstash-Cron is missing: a schedule needs one');
    const cron = parseCron(cronText);
    const idHeader = header(req, 'upstash-schedule-id');
    const scheduleId =
      idHeader === undefined ? newScheduleId() : validateResourceName(idHeader.trim(), 'Upstash-Schedule-Id');
    const queueHeader = header(req, 'upstash-queue-name');
    const queueName =
      queueHeader === undefined ? undefined : validateResourceName(queueHeader.trim(), 'Upstash-Queue-Name');
    const body = await readBody(req, config.maxBodyBytes);
    if (isUrlGroupName(destination)) {
      const group = await storeCall('read the url group', () => groupsOf(target).get(destination));
      if (!group) throw new ResourceNotFoundError(`url group ${destination} not found`);
    } else {
      validateDestination(destination, policy);
    }
    const messageHeaders: Record<string, string | string[] | undefined> = {};
    for (const [name, value] of Object.entries(req.headers as HeaderBag))
      if (!SCHEDULE_HEADERS.has(name)) messageHeaders[name] = value;
    if (header(req, 'upstash-not-before') !== undefined)
      throw new InvalidRequestError('Upstash-Not-Before is a single time: a schedule takes Upstash-Delay');
    const limits = publishLimitsOf(config, target);
    // Parsed as of time 0, Upstash-Delay comes back as the delay itself: each tick adds it to its time.
    const { notBefore: delayMs, ...options } = parsePublishHeaders(
      messageHeaders,
      limits,
      0,
      sentHeaderNames(req),
    );
    // A tick's message goes onto the stream (or into its queue) as it fires; one with a
    // flow-control key is admitted to the key by the worker that reads it (admit-flow-control-entry.ts).
    // Callbacks go into the template, so every tick's message carries them. The deduplication
    // headers deduplicate the schedule's creation, as QStash does ("when scheduling a message, the
    // deduplication happens before the schedule is created"); the content hash covers the cron.
    const { deduplicationKey, ...callbacks } = parsePublishExtras(
      messageHeaders,
      { destination, headers: { ...options.headers, 'upstash-cron': cron.text }, body },
      limits,
      policy,
    );
    const template: QueueMessage = {
      ...options,
      ...callbacks,
      id: '',
      destination,
      body,
      retried: 0,
      createdAt: 0,
      ...(queueName === undefined ? {} : { queueName }),
      // Every tick's message is the schedule creator's, as the schedule's callerIp says.
      ...callerIpField({ callerIp }),
    };
    const at = now();
    const store = schedulesOf(target);
    // A replace keeps the old createdAt and pause: the save script reads them, not this request.
    const record: ScheduleRecord = {
      scheduleId,
      cron: cron.text,
      destination,
      createdAt: at,
      isPaused: false,
    };
    if (delayMs !== undefined) record.delayMs = delayMs;
    const deduplication =
      deduplicationKey === undefined
        ? undefined
        : { key: `schedule:${deduplicationKey}`, windowMs: target.limits.deduplicationWindowMs };
    // The queue is created at the first tick; one that could not be created now refuses the
    // schedule, in the save script (save-schedule.ts).
    const quotas = quotasOf(target);
    const saved = await storeCall('store the schedule', () =>
      store.save(record, template, {
        nextTick: nextTick(cron, at),
        maxSchedules: quotas.maxSchedules,
        maxQueues: quotas.maxQueues,
        deduplication,
      }),
    );
    sendJson(res, 200, { scheduleId: saved.duplicateOf ?? scheduleId });
  };

  const setPaused =
    (paused: boolean) =>
    async ({ res, target, params }: ApiRequest) => {
      const scheduleId = validateResourceName(params.id, 'schedule id');
      const store = schedulesOf(target);
      const existing = await storeCall('read the schedule', () => store.get(scheduleId));
      if (!existing) throw new ResourceNotFoundError(`schedule ${scheduleId} not found`);
      const following = nextTick(parseCron(existing.record.cron), now());
      const found = await storeCall('change the schedule', () =>
        store.setPaused(scheduleId, paused, {
          nextTick: following,
          maxSchedules: quotasOf(target).maxSchedules,
        }),
      );
      if (!found) throw new ResourceNotFoundError(`schedule ${scheduleId} not found`);
      res.writeHead(200).end();
    };

  return [
    {
      path: 'schedules',
      methods: {
        GET: async ({ res, target }) =>
          sendJson(
            res,
            200,
            (await storeCall('list the schedules', () => schedulesOf(target).list())).map(answer),
          ),
      },
    },
    { path: 'schedules/:id/pause', methods: { PATCH: setPaused(true), POST: setPaused(true) } },
    { path: 'schedules/:id/resume', methods: { PATCH: setPaused(false), POST: setPaused(false) } },
    {
      path: 'schedules/:id',
      methods: {
        GET: async ({ res, target, params, redis, keys }) => {
          const scheduleId = validateResourceName(params.id, 'schedule id');
          const store = schedulesOf(target);
          const schedule = await storeCall('read the schedule', () => store.get(scheduleId));
          if (!schedule) throw new ResourceNotFoundError(`schedule ${scheduleId} not found`);
          // Only here, not in the list: it reads the events once per schedule.
          const states = await storeCall('read the last tick', async () =>
            schedule.lastTick === undefined
              ? {}
              : lastScheduleStates(
                  new EventLog(redis, keys),
                  await store.lastTickMessageIds(scheduleId),
                  schedule.lastTick,
                ),
          );
          sendJson(res, 200, {
            ...answer(schedule),
            ...(Object.keys(states).length > 0 && { lastScheduleStates: states }),
          });
        },
        DELETE: async ({ res, target, params }) => {
          const scheduleId = validateResourceName(params.id, 'schedule id');
          const existed = await storeCall('delete the schedule', () =>
            schedulesOf(target).delete(scheduleId),
          );
          if (!existed) throw new ResourceNotFoundError(`schedule ${scheduleId} not found`);
          res.writeHead(200).end();
        },
      },
    },
    // Before the create route: a POST under schedules/ is a create, whatever its destination.
    slashedNameRoute('schedules', 'schedule id', { GET: [], DELETE: [], PATCH: ['pause', 'resume'] }),
    { path: 'schedules/*destination', methods: { POST: create } },
  ];
}
