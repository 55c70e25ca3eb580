import http from 'node:http';

/**
 * One GET <origin>/_up: true once CouchDB answers 200. Any failure (refused, reset, timeout, a
 * non-200 while it starts) is just "not up yet". A fresh connection each time, so a probe never
 * takes a pooled socket that a request is about to need.
 */
export function probeUp(origin: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get(`${origin}/_up`, { agent: false, timeout: timeoutMs }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.once('timeout', () => request.destroy());
    request.once('error', () => resolve(false));
  });
}
