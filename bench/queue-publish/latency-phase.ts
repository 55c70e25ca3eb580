/**
 * bench/queue-publish.ts, phase 3: publish-to-delivery latency at a fixed offered rate, in rounds
 * alternating gateway and floor after an uncounted warm-up round of each; Redis commands and V8
 * heap allocated per message in the same rounds. Prints its lines.
 */
import type { Redis } from 'ioredis';
import { waitFor } from '../../local/wait.js';
import { alternateRounds } from '../lib/alternating-rounds.js';
import { callsBetween } from '../../test/helpers/calls-between.js';
import { commandCalls, cpuSeconds } from '../lib/process-usage.js';
import { median, quantile, round, spread } from '../lib/stats.js';
import type { CountingReceiver } from '../queue/counting-receiver.js';
import { garbagePerMessage, type Garbage, type GcCount } from '../queue/gc-count.js';
import { offerAtFixedRate } from '../queue/offer-at-rate.js';
import { OFFERED_RATE, ROUNDS, SECONDS, WARMUP_SECONDS } from './publish-settings.js';

/** Commands the bench itself sends or that no message causes. */
const NOT_PER_MESSAGE = /^(info|ping|xinfo|xlen|zrangebyscore|config)/;

export type LatencyRound = {
  p50: number;
  p99: number;
  commands: number;
  byCommand: string;
  failed: number;
  /** The serving process's CPU per message, publish and delivery, µs. */
  cpuUs: number;
} & Garbage;
export type LatencySide = 'gateway' | 'floor';
/** One figure of each round of a side, in round order. */
export type LatencyFigures = (
  side: LatencySide,
  field: 'p50' | 'p99' | 'commands' | 'cpuUs' | keyof Garbage,
) => number[];

/**
 * One latency round at OFFERED_RATE through `publishUrl` for `seconds`: p50/p99, Redis commands
 * per message, and the serving process's CPU (`pid`) and garbage (`gc`) per message.
 */
async function latencyRound(
  receiver: CountingReceiver,
  inspect: Redis,
  {
    publishUrl,
    pid,
    token,
    gc,
    seconds = SECONDS,
  }: { publishUrl: string; pid: number; token: string; gc: GcCount; seconds?: number },
): Promise<LatencyRound> {
  receiver.reset();
  const before = await commandCalls(inspect);
  const cpuBefore = cpuSeconds(pid);
  const garbageBefore = gc.totals();
  const offered = await offerAtFixedRate({ publishUrl, token, rate: OFFERED_RATE, seconds });
  await waitFor(
    'every offered message',
    async () => (receiver.received >= offered.sent - offered.failed ? true : undefined),
    { timeoutMs: 60_000 },
  );
  const cpuUs = ((cpuSeconds(pid) - cpuBefore) * 1e6) / receiver.received;
  const calls = callsBetween(before, await commandCalls(inspect), NOT_PER_MESSAGE);
  return {
    cpuUs,
    p50: quantile(receiver.latenciesMs, 0.5),
    p99: quantile(receiver.latenciesMs, 0.99),
    commands: [...calls.values()].reduce((a, b) => a + b, 0) / receiver.received,
    // What the commands are, by name, per message: the guarantees each one pays for are in docs/queue.md.
    byCommand: [...calls]
      .filter(([, count]) => count / receiver.received >= 0.05)
      .sort(([, a], [, b]) => b - a)
      .map(([name, count]) => `${name} ${round(count / receiver.received, 2)}`)
      .join(', '),
    failed: offered.failed,
    ...garbagePerMessage(garbageBefore, gc.totals(), receiver.received),
  };
}

export async function benchLatency(options: {
  receiver: CountingReceiver;
  inspect: Redis;
  token: string;
  sides: Record<LatencySide, { url: string; pid: number; gc: GcCount }>;
}): Promise<LatencyFigures> {
  const { receiver, inspect, token } = options;
  const latencySides = [options.sides.gateway, options.sides.floor];
  for (const { url, pid, gc } of latencySides)
    await latencyRound(receiver, inspect, { publishUrl: url, pid, token, gc, seconds: WARMUP_SECONDS });
  const [gatewayRounds, floorRounds] = await alternateRounds(
    ROUNDS,
    latencySides.map(
      ({ url, pid, gc }) =>
        () =>
          latencyRound(receiver, inspect, { publishUrl: url, pid, token, gc }),
    ),
  );
  const rounds = gatewayRounds!.map((gateway, i) => ({ gateway, floor: floorRounds![i]! }));
  const of: LatencyFigures = (side, field) => rounds.map((r) => r[side][field]);
  console.log(
    `latency at ${OFFERED_RATE}/s offered (open model, ${OFFERED_RATE * SECONDS} messages a round), publish to delivery:`,
  );
  for (const [i, r] of rounds.entries())
    console.log(
      `  round ${i + 1}: gateway p50 ${round(r.gateway.p50, 2)} ms, p99 ${round(r.gateway.p99, 2)} ms; floor p50 ${round(r.floor.p50, 2)} ms, p99 ${round(r.floor.p99, 2)} ms${r.gateway.failed + r.floor.failed > 0 ? ` (${r.gateway.failed}/${r.floor.failed} failed)` : ''}`,
    );
  console.log(
    `Redis commands per message (publish + delivery, script-internal calls included): gateway ${round(median(of('gateway', 'commands')), 2)}, floor ${round(median(of('floor', 'commands')), 2)}`,
  );
  console.log(`  gateway, last round: ${rounds.at(-1)!.gateway.byCommand}`);
  console.log(`  floor, last round: ${rounds.at(-1)!.floor.byCommand}`);
  // Bytes, not time: the load of a shared machine does not move them (bench/queue/gc-count.ts).
  const garbage = (side: LatencySide) =>
    `${side} ${round(median(of(side, 'kb')), 1)} KB [${spread(of(side, 'kb'), 1)}] (${round(median(of(side, 'scavengesPer1k')), 1)} scavenges per 1,000)`;
  console.log(
    `V8 heap allocated per message (publish + delivery): ${garbage('gateway')}, ${garbage('floor')}`,
  );
  // Both sides served the same offered stream here, so each handled about as many messages per
  // turn of its event loop: unlike the closed-loop publishes, the load does not set one side's
  // batching apart from the other's (docs/queue.md, Performance).
  const ratios = rounds.map((r) => r.gateway.cpuUs / r.floor.cpuUs);
  console.log(
    `CPU per message at ${OFFERED_RATE}/s (publish + delivery): gateway ${round(median(of('gateway', 'cpuUs')))} µs, floor ${round(median(of('floor', 'cpuUs')))} µs, ${round(median(ratios), 2)}x [${spread(ratios, 2)}] per pair of rounds\n`,
  );
  return of;
}
