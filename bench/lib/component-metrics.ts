/**
 * What kube-controller-manager and kube-scheduler say of their own API clients, from their
 * /metrics (served when the control plane is started with componentMetrics): the requests each
 * sent by HTTP method, and how long client-go's rate limiter (--kube-api-qps / --kube-api-burst,
 * one limiter per controller with --use-service-account-credentials) held them before sending:
 * the client-side throttling their logs mention only past 1 s, once per 10 s, at --v=0.
 */
import https from 'node:https';

export interface ComponentClientTotals {
  /** rest_client_requests_total by HTTP method (GET covers gets, lists and watches). */
  requestsByMethod: Map<string, number>;
  /** rest_client_rate_limiter_duration_seconds: requests that went through a limiter. */
  limited: number;
  /** Seconds they waited there, all together. */
  waitedSeconds: number;
  /** How many waited more than 1 s (the histogram's count above its 1 s bucket). */
  waitedOverOneSecond: number;
}

/** One component's /metrics text; its certificate is self-signed, made in memory, on loopback. */
function readMetrics(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    https
      .get(
        `https://127.0.0.1:${port}/metrics`,
        { rejectUnauthorized: false, timeout: 30_000 },
        (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (body += chunk));
          response.on('end', () =>
            response.statusCode === 200
              ? resolve(body)
              : reject(
                  new Error(`/metrics on ${port} answered ${response.statusCode}: ${body.slice(0, 200)}`),
                ),
          );
        },
      )
      .on('timeout', function (this: { destroy(err: Error): void }) {
        this.destroy(new Error(`/metrics on ${port} timed out`));
      })
      .on('error', reject);
  });
}

export function parseClientTotals(text: string): ComponentClientTotals {
  const totals: ComponentClientTotals = {
    requestsByMethod: new Map(),
    limited: 0,
    waitedSeconds: 0,
    waitedOverOneSecond: 0,
  };
  let upToOneSecond = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (line.startsWith('rest_client_requests_total{')) {
      const method = /method="([^"]*)"/.exec(line)?.[1] ?? '?';
      totals.requestsByMethod.set(method, (totals.requestsByMethod.get(method) ?? 0) + value);
    } else if (line.startsWith('rest_client_rate_limiter_duration_seconds_count{')) totals.limited += value;
    else if (line.startsWith('rest_client_rate_limiter_duration_seconds_sum{')) totals.waitedSeconds += value;
    else if (line.startsWith('rest_client_rate_limiter_duration_seconds_bucket{') && line.includes('le="1"'))
      upToOneSecond += value;
  }
  totals.waitedOverOneSecond = totals.limited - upToOneSecond;
  return totals;
}

function readClientTotals(port: number): Promise<ComponentClientTotals> {
  return readMetrics(port).then(parseClientTotals);
}

/** What was added between two readings of the same component. */
function clientTotalsBetween(
  before: ComponentClientTotals,
  after: ComponentClientTotals,
): ComponentClientTotals {
  return {
    requestsByMethod: new Map(
      [...after.requestsByMethod].map(([method, n]) => [
        method,
        n - (before.requestsByMethod.get(method) ?? 0),
      ]),
    ),
    limited: after.limited - before.limited,
    waitedSeconds: after.waitedSeconds - before.waitedSeconds,
    waitedOverOneSecond: after.waitedOverOneSecond - before.waitedOverOneSecond,
  };
}

/** Writes: every method but GET (server-side applies are PATCHes). */
function writesOf(totals: ComponentClientTotals): number {
  return [...totals.requestsByMethod]
    .filter(([method]) => method !== 'GET')
    .reduce((sum, [, n]) => sum + n, 0);
}

/** Each component's totals, by its process name. */
export type ComponentClients = Map<string, ComponentClientTotals>;

export async function readComponentClients(ports: {
  controllerManager: number;
  scheduler: number;
}): Promise<ComponentClients> {
  return new Map([
    ['kube-controller-manager', await readClientTotals(ports.controllerManager)],
    ['kube-scheduler', await readClientTotals(ports.scheduler)],
  ]);
}

/** What each component added between two readings. */
export function componentClientsBetween(before: ComponentClients, after: ComponentClients): ComponentClients {
  return new Map(
    [...after].map(([name, totals]) => [name, clientTotalsBetween(before.get(name) ?? totals, totals)]),
  );
}

/** The writes every component says it sent. */
export function componentWrites(clients: ComponentClients): number {
  return [...clients.values()].reduce((sum, totals) => sum + writesOf(totals), 0);
}

/** One report line per component: its requests by method and its client-side throttling. */
export function formatComponentClients(clients: ComponentClients): string[] {
  return [...clients].map(
    ([name, totals]) =>
      `${`${name}'s own`.padEnd(36)} ${[...totals.requestsByMethod].map(([m, n]) => `${m} ${n}`).join(', ')}; ` +
      `client-side throttling: ${totals.waitedSeconds.toFixed(1)} s waited by ${totals.limited} requests, ${totals.waitedOverOneSecond} over 1 s`,
  );
}
