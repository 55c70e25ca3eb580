import { createInterface } from 'node:readline';
import type { Request, RequestHandler, Response } from 'express';
import type { KubernetesListObject } from '@kubernetes/client-node';
import type winston from 'winston';
import type { CouchInstance } from '../../api/couch-instance.js';
import { toKubeApiError } from '../../kube/errors.js';
import { errorMessage } from '../../observability/logger.js';
import { buildInstanceRow } from '../api/instance-view.js';
import { instancesPath } from '../api/instance-routes.js';
import { userRequest, type UserRequest } from '../api/user-context.js';
import { BadInputError, toErrorAnswer } from '../http/errors.js';
import type { KubeHttp } from '../kube/kube-http.js';
import { CoalescingEventWriter } from './coalescing-event-writer.js';
import type { StreamLimiter } from './stream-limiter.js';

interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: CouchInstance & { code?: number; message?: string };
}

export interface InstanceStreamOptions {
  kube: KubeHttp;
  limiter: StreamLimiter;
  logger: winston.Logger;
  /** Aborted when the server stops: every stream ends. */
  stopping: AbortSignal;
  /** Seconds the API server keeps one watch open before the stream resumes it. */
  watchTimeoutSeconds?: number;
  heartbeatMs?: number;
  retryMs?: number;
}

/** The watch resumes from here; 410 Gone (too old) means list again. */
class ResourceVersionGoneError extends Error {}

/**
 * GET /api/namespaces/:namespace/instances/stream: server-sent events fed by a watch made with the
 * user's token. Events: `snapshot` (every row), `upsert` (one row), `delete` ({name}),
 * `unavailable` ({message}: the API server is away; the page keeps what it shows), `session-ended`
 * ({message}: the token was refused; the page goes to sign-in). Each session holds at most
 * `limiter`'s number of streams; a slow reader gets the latest state per instance (backpressure).
 */
export function instanceStream(options: InstanceStreamOptions): RequestHandler {
  const watchTimeoutSeconds = options.watchTimeoutSeconds ?? 300;
  const heartbeatMs = options.heartbeatMs ?? 20_000;
  const retryMs = options.retryMs ?? 2_000;

  return async (req: Request, res: Response) => {
    // Refused rather than ignored: the stream always starts from a list of its own (see follow).
    if (req.query.resourceVersion !== undefined)
      throw new BadInputError(
        'resourceVersion is not accepted: every stream starts with a snapshot of its own',
        { resourceVersion: 'not accepted' },
      );
    const user = userRequest(req, res);
    const release = options.limiter.acquire(user.sessionId);
    const closed = new AbortController();
    const end = (): void => closed.abort();
    res.on('close', () => {
      end();
      release();
    });
    options.stopping.addEventListener('abort', end, { once: true });
    res.status(200).set({
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
    const writer = new CoalescingEventWriter(res);
    const heartbeat = setInterval(() => writer.heartbeat(), heartbeatMs);
    try {
      await follow({ ...options, user, writer, signal: closed.signal, watchTimeoutSeconds, retryMs });
    } finally {
      clearInterval(heartbeat);
      options.stopping.removeEventListener('abort', end);
      release();
      res.end();
    }
  };
}

async function follow(
  options: InstanceStreamOptions & {
    user: UserRequest;
    writer: CoalescingEventWriter;
    signal: AbortSignal;
    watchTimeoutSeconds: number;
    retryMs: number;
  },
): Promise<void> {
  const { kube, user, writer, signal } = options;
  // Every stream starts with a list of its own, never from a resourceVersion the client sends: one
  // ahead of the API server's (a page from before an etcd restore, another cluster) would open a
  // watch that stays silent until the server catches up, and the page would show a frozen list.
  let resourceVersion: string | undefined;
  let unavailable = false;
  while (!signal.aborted) {
    try {
      if (resourceVersion === undefined) {
        const list = await kube.call<KubernetesListObject<CouchInstance>>(user.credentials, {
          method: 'GET',
          path: instancesPath(user.namespace),
        });
        resourceVersion = list.metadata?.resourceVersion ?? '0';
        writer.reset({
          event: 'snapshot',
          data: { resourceVersion, items: list.items.map(buildInstanceRow) },
        });
      } else if (unavailable) {
        writer.send('\u0000available', { event: 'available', data: {} });
      }
      unavailable = false;
      resourceVersion = await watchOnce({ ...options, resourceVersion });
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ResourceVersionGoneError) {
        resourceVersion = undefined;
        continue;
      }
      const answer = toErrorAnswer(err);
      if (answer.status === 401 || answer.status === 403) {
        writer.send('\u0000ended', {
          event: answer.status === 401 ? 'session-ended' : 'forbidden',
          data: { message: answer.body.message },
        });
        return;
      }
      if (!unavailable)
        options.logger.warn('instance stream interrupted', {
          user: user.username,
          namespace: user.namespace,
          error: errorMessage(err),
        });
      unavailable = true;
      writer.send('\u0000unavailable', { event: 'unavailable', data: { message: answer.body.message } });
      await new Promise((resolve) => setTimeout(resolve, options.retryMs).unref());
    }
  }
}

/** One watch request; resolves with the resourceVersion to resume from when the server ends it. */
async function watchOnce(options: {
  kube: KubeHttp;
  user: UserRequest;
  writer: CoalescingEventWriter;
  signal: AbortSignal;
  watchTimeoutSeconds: number;
  resourceVersion: string;
}): Promise<string> {
  const { user, writer } = options;
  let resourceVersion = options.resourceVersion;
  const response = await options.kube.stream(
    user.credentials,
    {
      method: 'GET',
      path: instancesPath(user.namespace),
      query: {
        watch: '1',
        resourceVersion,
        allowWatchBookmarks: 'true',
        timeoutSeconds: String(options.watchTimeoutSeconds),
      },
    },
    options.signal,
  );
  const lines = createInterface({ input: response, crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      if (line.trim() === '') continue;
      const event = JSON.parse(line) as WatchEvent;
      if (event.type === 'ERROR') {
        if (event.object.code === 410) throw new ResourceVersionGoneError();
        throw (
          toKubeApiError({ statusCode: event.object.code ?? 500, message: event.object.message }) ??
          new Error('watch error')
        );
      }
      resourceVersion = event.object.metadata?.resourceVersion ?? resourceVersion;
      if (event.type === 'BOOKMARK') continue;
      const row = buildInstanceRow(event.object);
      if (event.type === 'DELETED') writer.send(row.name, { event: 'delete', data: { name: row.name } });
      else writer.send(row.name, { event: 'upsert', data: row });
    }
  } finally {
    lines.close();
    response.destroy();
  }
  return resourceVersion;
}
