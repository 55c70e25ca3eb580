import type { ErrorBody } from './api-types.js';

/** A refused or failed call, with the server's code, message and per-field messages. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
  ) {
    super(body.message);
    this.name = 'ApiError';
  }

  get endsSession(): boolean {
    return this.status === 401;
  }
}

let csrfToken = '';

/** Set after sign-in and on load from GET /api/session; sent on every write. */
export function useCsrfToken(token: string): void {
  csrfToken = token;
}

/** Called when any answer says the session ended (401): the app goes to sign-in with the reason. */
let onSessionEnded: (message: string) => void = () => undefined;
export function onSessionEnd(handler: (message: string) => void): void {
  onSessionEnded = handler;
}

export function sessionEnded(message: string): void {
  onSessionEnded(message);
}

export async function api<T>(
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET') headers['X-CSRF-Token'] = csrfToken;
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch {
    throw new ApiError(0, {
      error: 'console-unreachable',
      message: 'The console server cannot be reached. Check your connection; nothing was changed.',
    });
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = { error: 'bad-answer', message: `The console answered ${response.status} without JSON.` };
  }
  if (!response.ok) {
    const error = new ApiError(response.status, parsed as ErrorBody);
    if (error.endsSession && !path.startsWith('/api/session')) sessionEnded(error.message);
    throw error;
  }
  return parsed as T;
}

export const namespacePath = (namespace: string): string =>
  `/api/namespaces/${encodeURIComponent(namespace)}`;
