import http from 'node:http';

/**
 * Publishes `rate` messages a second for `seconds` to `publishUrl`, open model: each leaves on
 * its schedule whether or not earlier ones have returned, so a slow answer delays nothing behind
 * it and shows in the latency instead. Each body carries `sentAt` (epoch ms, sub-ms) for the
 * counting receiver's publish-to-delivery latency.
 */
export async function offerAtFixedRate(input: {
  publishUrl: string;
  token: string;
  rate: number;
  seconds: number;
}): Promise<{ sent: number; failed: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const total = input.rate * input.seconds;
  const started = performance.timeOrigin + performance.now();
  let failed = 0;
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1_000) / input.rate;
    const wait = due - (performance.timeOrigin + performance.now());
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const body = JSON.stringify({ n: i, sentAt: performance.timeOrigin + performance.now() });
    inFlight.push(
      new Promise<void>((resolve) => {
        const req = http.request(
          input.publishUrl,
          {
            method: 'POST',
            agent,
            headers: { authorization: `Bearer ${input.token}`, 'content-type': 'application/json' },
          },
          (res) => {
            if (res.statusCode !== 201) failed += 1;
            res.resume();
            res.on('end', resolve);
          },
        );
        req.on('error', () => {
          failed += 1;
          resolve();
        });
        req.end(body);
      }),
    );
  }
  await Promise.all(inFlight);
  agent.destroy();
  return { sent: total, failed };
}
