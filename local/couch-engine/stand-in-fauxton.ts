import type http from 'node:http';
import { createRequire } from 'node:module';
import type serveStatic from 'serve-static';
import { sendJson } from './stand-in-send-json.js';

const UTILS_PATH = '/_utils';

export function isFauxtonPath(pathname: string): boolean {
  return pathname === UTILS_PATH || pathname.startsWith(`${UTILS_PATH}/`);
}

/**
 * Serves the Fauxton release in `releaseDir` at /_utils as CouchDB 3.x does: GET /_utils redirects
 * (301) to /_utils/, whose files are the release's (index.html for the folder itself); other
 * methods get 405. The Location is relative, so the gateway can put an instance's prefix before it.
 */
export function createFauxtonHandler(
  releaseDir: string,
): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  let serveFiles: serveStatic.RequestHandler<http.ServerResponse> | undefined;
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendJson(
        req,
        res,
        405,
        { error: 'method_not_allowed', reason: 'Only GET,HEAD allowed' },
        { Allow: 'GET,HEAD' },
      );
      return;
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === UTILS_PATH) {
      res.writeHead(301, { Location: `${UTILS_PATH}/${url.search}`, 'Content-Length': 0 });
      res.end();
      return;
    }
    // Loaded on the first /_utils request, not on every engine start (each wake is one).
    serveFiles ??= loadServeStatic()(releaseDir, { index: 'index.html', redirect: false });
    req.url = `${url.pathname.slice(UTILS_PATH.length)}${url.search}`;
    serveFiles(req, res, (err) =>
      err
        ? sendJson(req, res, 500, { error: 'internal_server_error', reason: err.message })
        : sendJson(req, res, 404, { error: 'not_found', reason: 'missing' }),
    );
  };
}

/** Express's own static file server, resolved through express (a declared dependency). */
function loadServeStatic(): typeof serveStatic {
  const fromExpress = createRequire(createRequire(import.meta.url).resolve('express'));
  return fromExpress('serve-static') as typeof serveStatic;
}
