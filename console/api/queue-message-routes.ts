import express, { type Request, type Response, type Router } from 'express';
import { BadInputError, QueueApiError } from '../http/errors.js';
import type { KubeHttp } from '../kube/kube-http.js';
import {
  buildMessageDetail,
  buildMessageRows,
  isMessageGroup,
  MESSAGE_GROUPS,
  type MessagePage,
  type QueueEvent,
} from './message-view.js';
import { callQueueApi, QUEUE_ID_PATTERN } from './queue-api-client.js';
import { objectName, userRequest, type UserRequest } from './user-context.js';

function queueId(value: unknown, field: string): string {
  if (typeof value !== 'string' || !QUEUE_ID_PATTERN.test(value))
    throw new BadInputError(`${field} is not an id the queue gave`, { [field]: 'not a queue id' });
  return value;
}

const DLQ_PAGE = 50;
/** The events API's largest page: the messages view folds the latest this many state changes. */
const EVENTS_WINDOW = 1_000;

/**
 * /api/namespaces/:namespace/bindings/:name/{messages,dlq}: a binding's messages (from its events),
 * its dead-letter queue with retry and delete, and cancel, all through the binding's own QStash API
 * with the binding's VQUEUE_TOKEN read as the user (see callQueueApi).
 */
export function queueMessageRoutes(options: { kube: KubeHttp; queueBaseUrl: string | undefined }): Router {
  const { kube, queueBaseUrl } = options;
  const router = express.Router({ mergeParams: true });
  const queue = <T>(user: UserRequest, req: Request, method: 'GET' | 'POST' | 'DELETE', path: string) =>
    callQueueApi<T>({ kube, user, binding: objectName(req), queueBaseUrl, method, path });

  router.get('/messages', async (req: Request, res: Response) => {
    const user = userRequest(req, res);
    const group = req.query.group;
    if (group !== undefined && !isMessageGroup(group))
      throw new BadInputError(`group must be one of ${MESSAGE_GROUPS.join(', ')}`, {
        group: `one of ${MESSAGE_GROUPS.join(', ')}`,
      });
    const page = await queue<{ events?: QueueEvent[]; cursor?: string }>(
      user,
      req,
      'GET',
      `events?count=${EVENTS_WINDOW}`,
    );
    const events = page.events ?? [];
    const answer: MessagePage = {
      messages: buildMessageRows(events, { now: Date.now(), ...(group !== undefined && { group }) }),
      partial: page.cursor !== undefined,
      eventsRead: events.length,
    };
    res.json(answer);
  });

  // One message's whole history, every attempt with its answer.
  router.get('/messages/:messageId', async (req: Request, res: Response) => {
    const user = userRequest(req, res);
    const messageId = queueId(req.params.messageId, 'messageId');
    const page = await queue<{ events?: QueueEvent[] }>(
      user,
      req,
      'GET',
      `events?count=${EVENTS_WINDOW}&messageId=${encodeURIComponent(messageId)}`,
    );
    const detail = buildMessageDetail(page.events ?? [], { now: Date.now(), messageId });
    if (!detail) throw new QueueApiError(404, `no events of message ${messageId} are kept`);
    res.json(detail);
  });

  router.delete('/messages/:messageId', async (req: Request, res: Response) => {
    const user = userRequest(req, res);
    const messageId = queueId(req.params.messageId, 'messageId');
    await queue(user, req, 'DELETE', `messages/${messageId}`);
    res.status(204).end();
  });

  router.get('/dlq', async (req: Request, res: Response) => {
    const user = userRequest(req, res);
    const cursor = req.query.cursor === undefined ? undefined : queueId(req.query.cursor, 'cursor');
    const page = await queue<{ messages?: unknown[]; cursor?: string }>(
      user,
      req,
      'GET',
      `dlq?count=${DLQ_PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    res.json({ messages: page.messages ?? [], cursor: page.cursor ?? null });
  });

  router.post('/dlq/:dlqId/retry', async (req: Request, res: Response) => {
    const user = userRequest(req, res);
    const dlqId = queueId(req.params.dlqId, 'dlqId');
    res.json(await queue(user, req, 'POST', `dlq/retry/${dlqId}`));
  });

  router.delete('/dlq/:dlqId', async (req: Request, res: Response) => {
    const user = userRequest(req, res);
    const dlqId = queueId(req.params.dlqId, 'dlqId');
    await queue(user, req, 'DELETE', `dlq/${dlqId}`);
    res.status(204).end();
  });

  return router;
}
