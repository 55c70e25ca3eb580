import http from 'node:http';
import net from 'node:net';
import { SYSTEM_DATABASES } from '../api/first-start.js';

// Whether a starting CouchDB serves yet, asked every few milliseconds by whoever waits for it: the
// gateway holding a wake's requests, and the local platform's kubelet stand-in starting a pod's
// engine. Shared here, as both components need the same cheap probe and neither may import the other.

/**
 * Whether anything accepts a TCP connection at `origin` (http://host:port). A waking CouchDB does not
 * listen for most of its boot, and it is asked every few milliseconds meanwhile, on the cores the
 * engine boots on: a refused connect costs about a third of a refused HTTP request's CPU (measured
 * 45-135 vs 220-390 us per probe on the 2-core machine, docs/cold-start.md), so the HTTP probe is
 * sent only once something listens.
 */
function accepts(origin: string, timeoutMs: number): Promise<boolean> {
  const { hostname, port } = new URL(origin);
  // An IPv6 origin's hostname keeps its brackets ([::1]); a socket address has none.
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  return new Promise((resolve) => {
    const socket = net.connect({ host, port: Number(port) || 80, timeout: timeoutMs });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => socket.destroy());
    socket.once('error', () => resolve(false));
    socket.once('close', () => resolve(false));
  });
}

/**
 * One GET <origin><path> without credentials: the status CouchDB answered, or undefined for any
 * failure (refused, reset, timeout), which is just "not up yet". A fresh connection each time, so
 * a probe never takes a pooled socket that a request is about to need.
 */
function probeStatus(url: string, timeoutMs: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false, timeout: timeoutMs }, (response) => {
      response.resume();
      resolve(response.statusCode);
    });
    request.once('timeout', () => request.destroy());
    request.once('error', () => resolve(undefined));
  });
}

/** One GET <origin>/_up once the port accepts: true once CouchDB answers 200 (a non-200 while it starts is "not up yet"). */
export async function probeUp(origin: string, timeoutMs: number): Promise<boolean> {
  if (!(await accepts(origin, timeoutMs))) return false;
  return (await probeStatus(`${origin}/_up`, timeoutMs)) === 200;
}

/**
 * At an instance's first start, true once CouchDB serves its system databases (api/first-start.ts),
 * which it makes only after /_up answers. Asked without credentials, an existing one answers 401
 * (CouchDB 3's admin-only default security) and a missing one 404: what the gateway can tell with
 * no secret, and a kubelet's httpGet probe cannot (both are failures to it).
 */
export async function probeSystemDatabases(origin: string, timeoutMs: number): Promise<boolean> {
  if (!(await accepts(origin, timeoutMs))) return false;
  const statuses = await Promise.all(
    SYSTEM_DATABASES.map((name) => probeStatus(`${origin}/${name}`, timeoutMs)),
  );
  return statuses.every((status) => status !== undefined && status < 500 && status !== 404);
}
