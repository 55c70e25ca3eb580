import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client as QStashClient, Receiver } from '@upstash/qstash';
import { serve, type WorkflowContext } from '@upstash/workflow';
import { serve as serveExpress, serveMany } from '@upstash/workflow/express';
import express from 'express';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { readBody } from '../../../gateway/queue/http/read-body.js';
import { buildQStashFormatToken, workflowUserIdOf } from '../../../api/qstash-token.js';
import { waitFor } from '../../../local/wait.js';
import { closeServer } from './test-receiver.js';

/** As the Express app's body parsers: a step result up to a message body and its JSON around it. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

/**
 * Workflow endpoints served by the unchanged @upstash/workflow SDK on loopback: each workflow at
 * `/<name>` of an Express app (`@upstash/workflow/express`) and of a plain node:http server that
 * hands the SDK's `serve()` a Request and writes its Response back (a Node adapter of a few
 * lines, as a user without a framework writes). The SDK verifies every delivery's signature with
 * the binding's signing keys and talks to the queue through `queueUrl`.
 */

export type RouteFunction = (context: WorkflowContext<unknown>) => Promise<unknown>;

/** The serve() options a test workflow sets itself; the connection ones are the helper's. */
export interface WorkflowOptions {
  failureFunction?: NonNullable<Parameters<typeof serve>[1]>['failureFunction'];
}

export interface WorkflowDefinition {
  route: RouteFunction;
  options?: WorkflowOptions;
}

export interface WorkflowEndpoints {
  /** `http://127.0.0.1:<port>/<name>` on the Express app. */
  expressUrl(name: string): string;
  /** `http://127.0.0.1:<port>/<name>` on the plain Request/Response server. */
  plainUrl(name: string): string;
  /**
   * Answers requests arriving from now on 503 (the queue delivers them again later), waits for
   * the handlers in flight to answer, then closes both servers. A handler still running after
   * the queue stopped would send its step results into the SDK's retries, which log after the
   * suite is done (jest then exits 1 though every test passed).
   */
  close(): Promise<void>;
}

/** Most a handler in flight may take to answer once {@link WorkflowEndpoints.close} is called. */
const DRAIN_TIMEOUT_MS = 30_000;

/**
 * Counts the requests being handled, from arrival until the handler calls `res.end`: the SDK
 * answers only after its own calls to the queue, and calls `end` even when the queue's delivery
 * gave up waiting and closed the socket (so the socket's close is not the handler's end).
 */
class HandlersInFlight {
  private count = 0;
  private draining = false;

  track(listener: http.RequestListener): http.RequestListener {
    return (req, res) => {
      if (this.draining) {
        res.writeHead(503, { connection: 'close' }).end();
        return;
      }
      this.count += 1;
      const end = res.end.bind(res);
      let ended = false;
      res.end = ((...args: Parameters<typeof res.end>) => {
        if (!ended) {
          ended = true;
          this.count -= 1;
        }
        return end(...args);
      }) as typeof res.end;
      void listener(req, res);
    };
  }

  drain(): Promise<true> {
    this.draining = true;
    return waitFor('the workflow handlers in flight to answer', async () => this.count === 0 || undefined, {
      timeoutMs: DRAIN_TIMEOUT_MS,
      intervalMs: 20,
    });
  }
}

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function headersOf(req: http.IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return headers;
}

export async function startWorkflowEndpoints(input: {
  target: QueueTarget;
  /** The queue URL the endpoints' SDK client uses (a replica other than the trigger's, say). */
  queueUrl: string;
  workflows: Record<string, WorkflowDefinition>;
  /**
   * Workflows served together with `serveMany` at `/many/<name>` of the Express app (made with
   * `createWorkflow` by the test, so one can `context.invoke` another).
   */
  many?: Parameters<typeof serveMany>[0];
  /**
   * Hears each request to the Express app once its body has arrived, before the SDK reads it
   * (epoch ms, sub-ms): a benchmark splits a step's time into the queue's part and the SDK's.
   */
  onArrival?: (req: http.IncomingMessage, at: number) => void;
  /**
   * The token of the endpoints' QStash client: by default the binding's token in QStash's format,
   * as the env Secret's VQUEUE_QSTASH_TOKEN holds it; a test with the operator passes that value.
   */
  qstashToken?: string;
}): Promise<WorkflowEndpoints> {
  const { target, queueUrl, workflows } = input;
  const sdkOptions = (url: string) => ({
    // The SDK's own retries, as a user's serve() has them: a step publish that meets a closed
    // connection is sent again rather than failing the delivery into a retry's backoff.
    // The binding's token in QStash's format, as docs/workflow.md tells a user to give it:
    // context.createWebhook reads the binding's user id from it.
    qstashClient: new QStashClient({
      baseUrl: queueUrl,
      token: input.qstashToken ?? buildQStashFormatToken(workflowUserIdOf(target), target.token),
    }),
    receiver: new Receiver({
      currentSigningKey: target.signingKey,
      nextSigningKey: target.nextSigningKey,
    }),
    url,
    // The SDK would otherwise read QSTASH_* from the test process's environment.
    env: {},
  });

  const app = express();
  const { onArrival } = input;
  if (onArrival)
    app.use((req, _res, next) => {
      req.once('end', () => onArrival(req, performance.timeOrigin + performance.now()));
      next();
    });
  app.use(express.json({ limit: MAX_BODY_BYTES }));
  app.use(express.text({ limit: MAX_BODY_BYTES }));
  const inFlight = new HandlersInFlight();
  const expressServer = http.createServer(inFlight.track(app));
  const expressBase = await listen(expressServer);
  for (const [name, { route, options }] of Object.entries(workflows))
    app.use(`/${name}`, serveExpress(route, { ...options, ...sdkOptions(`${expressBase}/${name}`) }));
  if (input.many !== undefined) {
    // No url: each workflow's is the request's, /many/<name>, which invoke rewrites to another's.
    const { url: _url, ...shared } = sdkOptions('');
    app.use('/many', serveMany(input.many, shared));
  }

  const plainHandlers = new Map<string, (request: Request) => Promise<Response>>();
  const plainListener: http.RequestListener = (req, res) => {
    void (async () => {
      const path = (req.url ?? '/').split('?')[0]!;
      const handler = plainHandlers.get(path.slice(1));
      if (!handler) {
        res.writeHead(404).end();
        return;
      }
      const body = await readBody(req, MAX_BODY_BYTES);
      const response = await handler(
        new Request(`${plainBase}${req.url}`, {
          method: req.method ?? 'POST',
          headers: headersOf(req),
          ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body }),
        }),
      );
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    })().catch((err: unknown) => {
      res.writeHead(500).end(String(err));
    });
  };
  const plainServer = http.createServer(inFlight.track(plainListener));
  const plainBase = await listen(plainServer);
  for (const [name, { route, options }] of Object.entries(workflows))
    plainHandlers.set(name, serve(route, { ...options, ...sdkOptions(`${plainBase}/${name}`) }).handler);

  return {
    expressUrl: (name) => `${expressBase}/${name}`,
    plainUrl: (name) => `${plainBase}/${name}`,
    close: async () => {
      await inFlight.drain();
      await Promise.all([closeServer(expressServer), closeServer(plainServer)]);
    },
  };
}
