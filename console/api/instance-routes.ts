import express, { type Request, type Response, type Router } from 'express';
import { adminSecretName, ADMIN_SECRET_KEYS, SETTEE_API_VERSION } from '../../api/contract.js';
import { COUCH_INSTANCE_PLURAL, type CouchInstance } from '../../api/couch-instance.js';
import type { KubernetesListObject, V1Secret } from '@kubernetes/client-node';
import { BadInputError } from '../http/errors.js';
import { couchInstances, reviewAccesses, secrets } from '../kube/access-review.js';
import type { KubeHttp } from '../kube/kube-http.js';
import {
  buildCouchInstance,
  buildInstanceRow,
  type InstanceCredentials,
  type InstanceDetail,
  type InstanceList,
} from './instance-view.js';
import { parseCreateInstanceInput } from './create-instance-input.js';
import { listEvents } from './events.js';
import { objectName, userRequest } from './user-context.js';

export const instancesPath = (namespace: string, name?: string): string =>
  `/apis/${SETTEE_API_VERSION}/namespaces/${namespace}/${COUCH_INSTANCE_PLURAL}${name ? `/${name}` : ''}`;

function decodeSecret(secret: V1Secret, key: string): string {
  return Buffer.from(secret.data?.[key] ?? '', 'base64').toString('utf8');
}

/**
 * /api/namespaces/:namespace/instances: every call is made with the user's own token, so the API
 * server's RBAC answers for another tenant's namespace exactly as it would to kubectl.
 */
export function instanceRoutes(options: { kube: KubeHttp }): Router {
  const { kube } = options;
  const router = express.Router({ mergeParams: true });

  router.get('/', async (req: Request, res: Response) => {
    const user = userRequest(req, res);
    const [list, permissions] = await Promise.all([
      kube.call<KubernetesListObject<CouchInstance>>(user.credentials, {
        method: 'GET',
        path: instancesPath(user.namespace),
      }),
      reviewAccesses(kube, {
        ...user,
        actions: {
          create: couchInstances('create'),
          delete: couchInstances('delete'),
          watch: couchInstances('watch'),
        },
      }),
    ]);
    const answer: InstanceList = {
      resourceVersion: list.metadata?.resourceVersion ?? '',
      items: list.items.map(buildInstanceRow),
      permissions,
    };
    res.json(answer);
  });

  router.post('/', async (req: Request, res: Response) => {
    const user = userRequest(req, res);
    const input = parseCreateInstanceInput(req.body);
    const created = await kube.call<CouchInstance>(user.credentials, {
      method: 'POST',
      path: instancesPath(user.namespace),
      body: buildCouchInstance(user.namespace, input),
    });
    res.status(201).json(buildInstanceRow(created));
  });

  router.get('/:name', async (req: Request, res: Response) => {
    const user = userRequest(req, res);
    const name = objectName(req);
    const [instance, events, permissions] = await Promise.all([
      kube.call<CouchInstance>(user.credentials, {
        method: 'GET',
        path: instancesPath(user.namespace, name),
      }),
      listEvents(kube, { ...user, kind: 'CouchInstance', name }),
      reviewAccesses(kube, {
        ...user,
        actions: {
          patch: couchInstances('patch', name),
          delete: couchInstances('delete', name),
          readCredentials: secrets('get', adminSecretName(name)),
        },
      }),
    ]);
    const answer: InstanceDetail = {
      row: buildInstanceRow(instance),
      spec: instance.spec ?? {},
      conditions: instance.status?.conditions ?? [],
      hibernatedAt: instance.status?.hibernatedAt ?? null,
      lastActivityTime: instance.status?.lastActivityTime ?? null,
      credentialsSecret: instance.status?.credentialsSecret ?? adminSecretName(name),
      events,
      permissions,
    };
    res.json(answer);
  });

  router.get('/:name/credentials', async (req: Request, res: Response) => {
    const user = userRequest(req, res);
    const name = objectName(req);
    const secret = await kube.call<V1Secret>(user.credentials, {
      method: 'GET',
      path: `/api/v1/namespaces/${user.namespace}/secrets/${adminSecretName(name)}`,
    });
    res.set('Cache-Control', 'no-store');
    const answer: InstanceCredentials = {
      username: decodeSecret(secret, ADMIN_SECRET_KEYS.username),
      password: decodeSecret(secret, ADMIN_SECRET_KEYS.password),
      url: decodeSecret(secret, ADMIN_SECRET_KEYS.url),
    };
    res.json(answer);
  });

  router.patch('/:name/keep-alive', async (req: Request, res: Response) => {
    const user = userRequest(req, res);
    const name = objectName(req);
    const keepAlive = (req.body as { keepAlive?: unknown } | undefined)?.keepAlive;
    if (typeof keepAlive !== 'boolean')
      throw new BadInputError('keepAlive must be true or false', { keepAlive: 'true or false' });
    const patched = await kube.call<CouchInstance>(user.credentials, {
      method: 'PATCH',
      path: instancesPath(user.namespace, name),
      contentType: 'application/merge-patch+json',
      body: { spec: { keepAlive } },
    });
    res.json(buildInstanceRow(patched));
  });

  router.delete('/:name', async (req: Request, res: Response) => {
    const user = userRequest(req, res);
    const name = objectName(req);
    const confirmation = (req.body as { confirmName?: unknown } | undefined)?.confirmName;
    if (confirmation !== name)
      throw new BadInputError(`Type the instance's name, ${name}, to delete it.`, {
        confirmName: `type ${name}`,
      });
    await kube.call(user.credentials, { method: 'DELETE', path: instancesPath(user.namespace, name) });
    res.status(204).end();
  });

  return router;
}
