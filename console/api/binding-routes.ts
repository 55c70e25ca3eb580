import express, { type Request, type Response, type Router } from 'express';
import type { KubernetesListObject } from '@kubernetes/client-node';
import { SETTEE_API_VERSION } from '../../api/contract.js';
import {
  ANNOTATION_ROTATE_SIGNING_KEYS,
  QUEUE_BINDING_PLURAL,
  queueEnvSecretName,
  type QueueBinding,
} from '../../api/queue-binding.js';
import { readQueueEnv } from './queue-env.js';
import { queueBindings, reviewAccesses, secrets } from '../kube/access-review.js';
import type { KubeHttp } from '../kube/kube-http.js';
import { buildBindingRow, renderDotenv, type BindingDetail } from './binding-view.js';
import { listEvents } from './events.js';
import { objectName, userRequest } from './user-context.js';
import { queueMessageRoutes } from './queue-message-routes.js';
import { workflowRunRoutes } from './workflow-run-routes.js';

const bindingsPath = (namespace: string, name?: string): string =>
  `/apis/${SETTEE_API_VERSION}/namespaces/${namespace}/${QUEUE_BINDING_PLURAL}${name ? `/${name}` : ''}`;

/** /api/namespaces/:namespace/bindings: QueueBindings and their queue values, read as the user. */
export function bindingRoutes(options: { kube: KubeHttp; queueBaseUrl: string | undefined }): Router {
  const { kube, queueBaseUrl } = options;
  const router = express.Router({ mergeParams: true });

  router.get('/', async (req: Request, res: Response) => {
    const user = userRequest(req, res);
    const list = await kube.call<KubernetesListObject<QueueBinding>>(user.credentials, {
      method: 'GET',
      path: bindingsPath(user.namespace),
    });
    res.json({ items: list.items.map(buildBindingRow) });
  });

  router.get('/:name', async (req: Request, res: Response) => {
    const user = userRequest(req, res);
    const name = objectName(req);
    const [binding, events, permissions] = await Promise.all([
      kube.call<QueueBinding>(user.credentials, { method: 'GET', path: bindingsPath(user.namespace, name) }),
      listEvents(kube, { ...user, kind: 'QueueBinding', name }),
      reviewAccesses(kube, {
        ...user,
        actions: { readEnv: secrets('get', queueEnvSecretName(name)), rotate: queueBindings('patch', name) },
      }),
    ]);
    const answer: BindingDetail = {
      row: buildBindingRow(binding),
      connection: {
        host: binding.spec.connection.host,
        port: binding.spec.connection.port ?? 6379,
        tls: binding.spec.connection.tls ?? false,
      },
      signingKeys: binding.status?.signingKeys ?? null,
      conditions: binding.status?.conditions ?? [],
      events,
      permissions,
    };
    res.json(answer);
  });

  router.get('/:name/env', async (req: Request, res: Response) => {
    const user = userRequest(req, res);
    const env = await readQueueEnv(kube, user, objectName(req));
    res.set('Cache-Control', 'no-store');
    res.json(env);
  });

  router.get('/:name/env-file', async (req: Request, res: Response) => {
    const user = userRequest(req, res);
    const name = objectName(req);
    const env = await readQueueEnv(kube, user, name);
    res.set('Cache-Control', 'no-store');
    res.attachment(`${name}.env`);
    res.type('text/plain; charset=utf-8');
    res.send(renderDotenv(env, { namespace: user.namespace, name }));
  });

  router.use('/:name', queueMessageRoutes({ kube, queueBaseUrl }));
  router.use('/:name', workflowRunRoutes({ kube, queueBaseUrl }));

  router.post('/:name/rotate-signing-keys', async (req: Request, res: Response) => {
    const user = userRequest(req, res);
    const name = objectName(req);
    const patched = await kube.call<QueueBinding>(user.credentials, {
      method: 'PATCH',
      path: bindingsPath(user.namespace, name),
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: { [ANNOTATION_ROTATE_SIGNING_KEYS]: new Date().toISOString() } } },
    });
    res.json({ row: buildBindingRow(patched), signingKeys: patched.status?.signingKeys ?? null });
  });

  return router;
}
