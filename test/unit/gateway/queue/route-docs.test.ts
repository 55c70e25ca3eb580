import { readFileSync } from 'node:fs';
import { queueApiRouteTable } from '../../../helpers/queue/api-route-table.js';

/** A path with its params written alike: `topics/:name` and `topics/{name}` both read `topics/{}`. */
function normalise(path: string): string {
  return path
    .replace(/[?#].*$/, '')
    .replace(/\/+$/, '')
    .split('/')
    .map((segment) => (/^[:*]|^\{.*\}$/.test(segment) ? '{}' : segment))
    .join('/');
}

/** Every `METHOD /v2/...` in a row of the route tables of docs/queue.md and docs/workflow.md. */
function documentedRoutes(): Set<string> {
  const markdown = ['queue.md', 'workflow.md']
    .map((doc) => readFileSync(new URL(`../../../../docs/${doc}`, import.meta.url), 'utf8'))
    .join('\n');
  const routes = new Set<string>();
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('|')) continue;
    const firstCell = line.split('|')[1] ?? '';
    for (const [, path] of firstCell.matchAll(/`(?:[A-Z]+ )?(?:or [A-Z]+ )?\/v2\/([^`\s]*)[^`]*`/g))
      routes.add(normalise(path!));
  }
  return routes;
}

describe('the route tables of docs/queue.md and docs/workflow.md', () => {
  it("when the gateway's route table is read, then every route's path is a row of the docs' route tables", () => {
    const documented = documentedRoutes();
    const missing = queueApiRouteTable()
      .map((route) => route.path)
      .filter((path) => !documented.has(normalise(path)));
    expect(missing).toEqual([]);
  });
});
