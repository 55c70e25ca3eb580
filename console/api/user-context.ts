import type { Request, Response } from 'express';
import type { Credentials } from '../kube/kube-http.js';
import { sessionOf } from '../session/session-middleware.js';
import { checkNamespace, checkObjectName } from './names.js';

/** The user's credentials and the namespace and object a route names, checked before any call. */
export interface UserRequest {
  credentials: Credentials;
  namespace: string;
  username: string;
  sessionId: string;
}

export function userRequest(req: Request, res: Response): UserRequest {
  const session = sessionOf(res);
  return {
    credentials: { kind: 'user', token: session.token },
    namespace: checkNamespace(req.params.namespace),
    username: session.username,
    sessionId: session.id,
  };
}

export function objectName(req: Request): string {
  return checkObjectName(req.params.name);
}
