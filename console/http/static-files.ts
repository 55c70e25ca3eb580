import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Router } from 'express';

/**
 * Where `npm run build` (vite) puts the page: console/web/dist beside this folder in the sources,
 * dist/console/web/dist in the image (the Dockerfile copies it there), the same path from here.
 */
export const DEFAULT_WEB_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'web',
  'dist',
);

export class WebBuildMissingError extends Error {
  readonly code = 'WEB_BUILD_MISSING';
  constructor(readonly dir: string) {
    super(`the console's page is not built: ${dir}/index.html is missing (run npm run build)`);
    this.name = 'WebBuildMissingError';
  }
}

/**
 * The built page: hashed assets cached for good, index.html never cached, and every other GET
 * outside /api answered with index.html so the page's own routes (/instances/x) load on reload.
 */
export function staticFiles(dir: string): Router {
  const index = path.join(dir, 'index.html');
  if (!fs.existsSync(index)) throw new WebBuildMissingError(dir);
  const router = express.Router();
  router.use(
    '/assets',
    express.static(path.join(dir, 'assets'), {
      immutable: true,
      maxAge: '365d',
      index: false,
      fallthrough: false,
    }),
  );
  router.use(express.static(dir, { index: false, maxAge: 0 }));
  router.get(/^(?!\/api\/).*/, (_req, res) => {
    res.set('Cache-Control', 'no-store');
    res.sendFile(index);
  });
  return router;
}
