/**
 * What tenant A sends: at its limits (its publishes at its binding's maxRequestsPerSecond, its
 * reads and writes at the free plan's rates, each on schedule) or as a flood (as fast as answered,
 * over those limits). Run by A's own process (tenant-a-load.ts).
 */
import { DEFAULT_FREE_LIMITS } from '../../api/free-envelope.js';
import { basicAuth } from '../../test/helpers/gateway/http-request.js';

export interface Tenant {
  name: string;
  publishUrl: string;
  docUrl: string;
  token: string;
}

export const ADMIN = { username: 'admin', password: 'bench' };
/** Tenant A's binding's spec.limits.maxRequestsPerSecond, which it publishes at in 'A at its limits'. */
export const A_LIMIT_PER_SECOND = 200;

export interface SentTally {
  requests: number;
  refused: number;
}

export const publishInit = (tenant: Tenant): RequestInit => ({
  method: 'POST',
  headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
  body: '{"event":"order.created","id":12345}',
});
export const readInit: RequestInit = {
  headers: { authorization: basicAuth(ADMIN.username, ADMIN.password) },
};
const writeUrl = (tenant: Tenant, id: string): string => `${tenant.docUrl.replace(/\/doc$/, '')}/${id}`;

/** Half of `connections` publish, half read and write documents, each as fast as answered. */
export async function flood(tenant: Tenant, connections: number, stop: () => boolean): Promise<SentTally> {
  const tally = { requests: 0, refused: 0 };
  const connection = async (i: number): Promise<void> => {
    for (let n = 0; !stop(); n++) {
      const [url, init] =
        i % 2 === 0
          ? [tenant.publishUrl, publishInit(tenant)]
          : n % 4 === 0
            ? [writeUrl(tenant, `d-${Date.now()}-${i}-${n}`), { ...readInit, method: 'PUT', body: '{"n":1}' }]
            : [tenant.docUrl, readInit];
      const response = await fetch(url, init).catch(() => undefined);
      await response?.arrayBuffer().catch(() => undefined);
      tally.requests += 1;
      if (response?.status === 429) tally.refused += 1;
    }
  };
  await Promise.all(Array.from({ length: connections }, (_, i) => connection(i)));
  return tally;
}

/** Sends `send` `rate` times a second on schedule (open model) until `stop`; counts 429s. */
async function paced(
  rate: number,
  stop: () => boolean,
  send: (n: number) => Promise<Response | undefined>,
): Promise<SentTally> {
  const tally = { requests: 0, refused: 0 };
  const inFlight: Array<Promise<void>> = [];
  const started = performance.now();
  for (let n = 0; !stop(); n++) {
    const wait = started + (n * 1000) / rate - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    inFlight.push(
      send(n).then(async (response) => {
        await response?.arrayBuffer().catch(() => undefined);
        tally.requests += 1;
        if (response?.status === 429) tally.refused += 1;
      }),
    );
  }
  await Promise.all(inFlight);
  return tally;
}

/** Tenant A at its limits: its publishes, reads and writes each at its limit, on schedule. */
export async function atItsLimits(tenant: Tenant, stop: () => boolean): Promise<SentTally> {
  const ignoreFailure = () => undefined;
  const streams = await Promise.all([
    paced(A_LIMIT_PER_SECOND, stop, () => fetch(tenant.publishUrl, publishInit(tenant)).catch(ignoreFailure)),
    paced(DEFAULT_FREE_LIMITS.readsPerSecond, stop, () =>
      fetch(tenant.docUrl, readInit).catch(ignoreFailure),
    ),
    paced(DEFAULT_FREE_LIMITS.writesPerSecond, stop, (n) =>
      fetch(writeUrl(tenant, `paced-${Date.now()}-${n}`), {
        ...readInit,
        method: 'PUT',
        body: '{"n":1}',
      }).catch(ignoreFailure),
    ),
  ]);
  return {
    requests: streams.reduce((n, s) => n + s.requests, 0),
    refused: streams.reduce((n, s) => n + s.refused, 0),
  };
}
