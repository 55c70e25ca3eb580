/**
 * Rounds that alternate the sides of a comparison (the gateway and its floor): a change in the
 * shared machine's load during a run then falls on every side alike, and each side's figure is
 * the median of its rounds, reported with their spread.
 */
import type { PublishLoadResult } from '../queue/publish-load.js';
import { median, spread } from './stats.js';

/** A publish load's result with the CPU the serving process spent per message stored. */
export type MeasuredPublishRun = PublishLoadResult & { cpuUs: number };

/** `rounds` rounds of each side in turn (a, b, a, b, ...): each side's results in round order. */
export async function alternateRounds<T>(
  rounds: number,
  sides: readonly (() => Promise<T>)[],
): Promise<T[][]> {
  const results: T[][] = sides.map(() => []);
  for (let i = 0; i < rounds; i++) for (const [s, side] of sides.entries()) results[s]!.push(await side());
  return results;
}

/** Each field of one side's runs, their median: one line standing for the alternating rounds. */
export function medianRun(runs: readonly MeasuredPublishRun[]): MeasuredPublishRun & { cpuSpread: string } {
  const of = (pick: (r: MeasuredPublishRun) => number) => median(runs.map(pick));
  return {
    ...runs[0]!,
    messagesPerSecond: of((r) => r.messagesPerSecond),
    latencyUs: {
      p50: of((r) => r.latencyUs.p50),
      p99: of((r) => r.latencyUs.p99),
      mean: of((r) => r.latencyUs.mean),
    },
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
    non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
    cpuUs: of((r) => r.cpuUs),
    cpuSpread: spread(
      runs.map((r) => r.cpuUs),
      0,
    ),
  };
}
