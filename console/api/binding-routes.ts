import express, { type Request, type Response, type Router } from 'express';
import type { KubernetesListObject, V1Secret } from '@kubernetes/client-node';
import { SETTEE_API_VERSION } from '../../api/contract.js';
import {
  ANNOTATION_ROTATE_SIGNING_KEYS,
  QUEUE_BINDING_PLURAL,
  QueueEnvKey,
  queueEnvSecretName,
  type QueueBinding,
  type QueueEnv,
} from '../../api/queue-binding.js';
import { queueBindings, reviewAccesses, secrets } from '../kube/access-review.js';
import type { KubeHttp } from '../kube/kube-http.js';
import { buildBindingRow, renderDotenv } from './binding-view.js';
import { listEvents } from './events.js';
import { objectName, userRequest, type UserRequest } from './user-context.js';

const bindingsPath = (namespace: string, name?: string): string =>
  `/apis/${SETTEE_API_VERSION}/namespaces/${namespace}/${QUEUE_BINDING_PLURAL}${name ? `/${name}` : ''}`;

async function readQueueEnv(kube: KubeHttp, user: UserRequest, name: string): Promise<QueueEnv> {
  const secret = await kube.call<V1Secret>(user.credentials, {
    method: 'GET',
    path: `/api/v1/namespaces/${user.namespace}/secrets/${queueEnvSecretName(name)}`,
  });
  const env = {} as QueueEnv;
  for (const key of Object.values(QueueEnvKey))
    env[key] = Buffer.from(secret.data?.[key] ?? '', 'base64').toString('utf8');
  return env;
}

/** /api/namespaces/:namespace/bindings: QueueBindings and their queue values, read as the user. */
export function bindingRoutes(options: { kube: KubeHttp }): Router {
  const { kube } = options;
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
    res.json({
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
    });
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
