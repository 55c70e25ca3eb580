/**
 * What a refusal costs the gateway, beside what an accepted publish costs (issue 29, tenant
 * isolation: a tenant at its limits is refused, and each refusal is work on the event loop every
 * tenant shares). One gateway (the queue gateway's bundle, delivery workers off) serves two
 * bindings on one Redis: `open`, with no burst limit, whose publishes are stored (201), and
 * `limited`, whose spec.limits.maxRequestsPerSecond is 1, so all but one a second are refused
 * (429 with Retry-After, Burst-RateLimit-*, before the body is read). A closed loop of keep-alive
 * connections publishes to each in alternating rounds; per request answered, the gateway's main
 * thread's run time (schedstat, ns precision), the whole process's CPU and Redis's CPU.
 *
 *   npx tsx bench/refusal-cost.ts     (REFUSAL_BENCH_ROUNDS=5 rounds of REFUSAL_BENCH_SECONDS=3 s
 *                                      a side, REFUSAL_BENCH_CONNECTIONS=16)
 */
import os from 'node:os';
import { Redis } from 'ioredis';
import { startRedis } from '../local/redis-server.js';
import { spawnQueueGateway } from '../test/helpers/queue/spawn-queue-gateway.js';
import { testQueueTarget } from '../test/helpers/queue/test-queue-target.js';
import { alternateRounds } from './lib/alternating-rounds.js';
import { buildQueueGatewayEnv } from './lib/gateway-bench-env.js';
import { cpuSeconds, mainThreadMs, redisCpuSeconds } from './lib/process-usage.js';
import { medianSpreadText } from './lib/stats.js';
import { runPublishLoad } from './queue/publish-load.js';

const ROUNDS = Number(process.env.REFUSAL_BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.REFUSAL_BENCH_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.REFUSAL_BENCH_CONNECTIONS ?? 16);
const BODY = JSON.stringify({ event: 'order.created', id: 12345 });
/** Where the stored messages would go: nothing delivers them (workers off), so nothing listens. */
const DESTINATION = 'http://127.0.0.1:9/hook';

interface SideRound {
  requests: number;
  non2xx: number;
  perSecond: number;
  loopUs: number;
  cpuUs: number;
  redisUs: number;
  p50Us: number;
}

async function main(): Promise<void> {
  const redis = await startRedis();
  const inspect = new Redis({ host: redis.host, port: redis.port, password: redis.password });
  try {
    const open = testQueueTarget(redis, { namespace: 'bench', name: 'open', db: 0 });
    const limited = testQueueTarget(redis, {
      namespace: 'bench',
      name: 'limited',
      db: 1,
      limits: { maxRequestsPerSecond: 1 },
    });
    const gateway = await spawnQueueGateway({
      targets: [open, limited],
      bundled: true,
      workers: false,
      env: buildQueueGatewayEnv('{refusal}:'),
    });
    try {
      const pid = gateway.proc.pid;
      const load = (name: string, durationMs: number) => ({
        mode: 'http' as const,
        connections: CONNECTIONS,
        durationMs,
        warmupMs: 0,
        url: `${gateway.baseUrl}/queue/bench/${name}/v2/publish/${DESTINATION}`,
        token: redis.password,
        body: BODY,
      });
      // Uncounted: the JIT's warm-up, both paths.
      for (const name of ['open', 'limited']) await runPublishLoad(load(name, 2_000));
      const measure = (name: string) => async (): Promise<SideRound> => {
        const [loop, cpu, redisCpu] = [
          mainThreadMs(pid).ran,
          cpuSeconds(pid),
          await redisCpuSeconds(inspect),
        ];
        const result = await runPublishLoad(load(name, SECONDS * 1_000));
        // Every request's CPU counts, those in the load's closing moments too: divide by all answered.
        const n = result.requests;
        return {
          requests: n,
          non2xx: result.non2xx,
          perSecond: result.requestsPerSecond,
          loopUs: ((mainThreadMs(pid).ran - loop) * 1_000) / n,
          cpuUs: ((cpuSeconds(pid) - cpu) * 1e6) / n,
          redisUs: (((await redisCpuSeconds(inspect)) - redisCpu) * 1e6) / n,
          p50Us: result.latencyUs.p50,
        };
      };
      const loadBefore = os.loadavg();
      const [accepted, refused] = (await alternateRounds(ROUNDS, [measure('open'), measure('limited')])) as [
        SideRound[],
        SideRound[],
      ];
      const loadAfter = os.loadavg();
      const row = (label: string, runs: SideRound[]) =>
        `| ${label} | ${runs.reduce((s, r) => s + r.requests, 0)} (${runs.reduce((s, r) => s + r.non2xx, 0)}) | ${medianSpreadText(
          runs.map((r) => r.perSecond),
          0,
        )} | ${medianSpreadText(runs.map((r) => r.loopUs))} | ${medianSpreadText(runs.map((r) => r.cpuUs))} | ${medianSpreadText(runs.map((r) => r.redisUs))} | ${medianSpreadText(
          runs.map((r) => r.p50Us),
          0,
        )} |`;
      console.log(
        `\n${ROUNDS} alternating rounds of ${SECONDS} s a side, ${CONNECTIONS} connections; load average ${loadBefore.map((l) => l.toFixed(1)).join(' ')} before, ${loadAfter.map((l) => l.toFixed(1)).join(' ')} after; medians [spread] of the rounds`,
      );
      console.log(
        '| publish | requests (non-2xx) | answered/s | gateway loop ran, us a request | gateway CPU us a request | Redis CPU us a request | p50 us |',
      );
      console.log('|---|---|---|---|---|---|---|');
      console.log(row('accepted (201, stored)', accepted));
      console.log(row('refused (429, burst limit)', refused));
      const ratios = refused.map((r, i) => r.loopUs / accepted[i]!.loopUs);
      console.log(
        `\nA refusal's loop time over an accepted publish's, per pair of adjacent rounds: ${medianSpreadText(ratios, 2)}`,
      );
    } finally {
      await gateway.proc.stop();
    }
  } finally {
    inspect.disconnect();
    await redis.stop();
  }
}

await main();
