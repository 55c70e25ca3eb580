import { bundleEntry } from '../bundle.js';

let built: Promise<string> | undefined;

/**
 * The stand-in server as one plain JavaScript file. Every wake starts a new engine process, and
 * loading it through tsx cost about 200 ms of each cold start; esbuild turns the TypeScript into
 * JavaScript once per process (a few tens of ms), and every later start is plain `node`.
 */
export function standInServerScript(): Promise<string> {
  built ??= bundleEntry('local/couch-engine/pouchdb-stand-in-server.ts');
  return built;
}
