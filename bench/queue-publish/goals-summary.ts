/** bench/queue-publish.ts's summary: each figure against issue 26's goal, MISSED beside those not met. */
import os from 'node:os';
import { median, round, spread } from '../lib/stats.js';
import type { LatencyFigures } from './latency-phase.js';
import type { PublishingFigures } from './publishing-phase.js';
import { BATCH, GOALS, OFFERED_RATE, ROUNDS } from './publish-settings.js';

/** A summary line: the figure, its goal, and MISSED when it is not met. */
function goalLine(name: string, figure: string, goal: string, met: boolean): void {
  console.log(`  ${name.padEnd(52)} ${figure.padEnd(28)} goal ${goal.padEnd(12)} ${met ? 'met' : 'MISSED'}`);
}

export function printGoals(options: {
  publishing: PublishingFigures;
  delivered: { perSecond: number; cpuUs: number };
  floorDelivered: { perSecond: number; cpuUs: number };
  latency: LatencyFigures;
  loadAtStart: number;
}): void {
  const { publishing, delivered, floorDelivered, latency: of, loadAtStart } = options;
  const { single, cpuRatios, floorSingle, direct, batch } = publishing;
  const p50 = median(of('gateway', 'p50'));
  const p99 = median(of('gateway', 'p99'));
  const publishRatio = median(cpuRatios);
  const deliveryRatio = delivered.cpuUs / floorDelivered.cpuUs;
  console.log(
    `against the goals (machine load average now ${round(os.loadavg()[0]!, 1)}; medians of ${ROUNDS} rounds, their spread in brackets):`,
  );
  goalLine(
    `latency at ${OFFERED_RATE}/s, p50`,
    `${round(p50, 2)} ms [${spread(of('gateway', 'p50'), 2)}], floor ${round(median(of('floor', 'p50')), 2)}`,
    `≤ ${GOALS.latencyP50Ms} ms`,
    p50 <= GOALS.latencyP50Ms,
  );
  goalLine(
    `latency at ${OFFERED_RATE}/s, p99`,
    `${round(p99, 2)} ms [${spread(of('gateway', 'p99'), 1)}], floor ${round(median(of('floor', 'p99')), 2)}`,
    `≤ ${GOALS.latencyP99Ms} ms`,
    p99 <= GOALS.latencyP99Ms,
  );
  goalLine(
    'CPU per publish, gateway / floor',
    `${round(publishRatio, 2)}x [${spread(cpuRatios, 2)}] (${round(single.cpuUs)} [${single.cpuSpread}] / ${round(floorSingle.cpuUs)} [${floorSingle.cpuSpread}] µs, ${Math.round(single.messagesPerSecond)} / ${Math.round(floorSingle.messagesPerSecond)} a second)`,
    `≤ ${GOALS.cpuToFloor}x`,
    publishRatio <= GOALS.cpuToFloor,
  );
  goalLine(
    'CPU per delivery, gateway / floor',
    `${round(deliveryRatio, 2)}x (${round(delivered.cpuUs)} / ${round(floorDelivered.cpuUs)} µs)`,
    `≤ ${GOALS.cpuToFloor}x`,
    deliveryRatio <= GOALS.cpuToFloor,
  );
  goalLine(
    'single publishes',
    `${Math.round(single.messagesPerSecond)}/s, floor ${Math.round(floorSingle.messagesPerSecond)}, XADD ${Math.round(direct.messagesPerSecond)}`,
    `≥ ${GOALS.singlePublishes}`,
    single.messagesPerSecond >= GOALS.singlePublishes,
  );
  goalLine(
    `publishes in batches of ${BATCH}`,
    `${Math.round(batch.messagesPerSecond)} msg/s, XADD ${Math.round(direct.messagesPerSecond)}`,
    `≥ ${GOALS.batchedPublishes}`,
    batch.messagesPerSecond >= GOALS.batchedPublishes,
  );
  goalLine(
    'signed deliveries from a backlog',
    `${Math.round(delivered.perSecond)}/s, floor ${Math.round(floorDelivered.perSecond)}`,
    `≥ ${GOALS.deliveries}`,
    delivered.perSecond >= GOALS.deliveries,
  );
  // No number is the goal here: each command is there for a guarantee (docs/queue.md, Performance).
  const commands = median(of('gateway', 'commands'));
  console.log(
    `  ${'Redis commands per message (publish + delivery)'.padEnd(52)} ${`${round(commands, 2)}, floor ${round(median(of('floor', 'commands')), 2)}`.padEnd(28)} ${'(each one a guarantee needs; docs/queue.md)'}`,
  );
  console.log(
    `  (load average at the start ${round(loadAtStart, 1)}, at the end ${round(os.loadavg()[0]!, 1)})`,
  );
}
