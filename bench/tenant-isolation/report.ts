/**
 * The tenant-isolation bench's tables: per phase, B's latencies (p99 of every sample of the
 * phase's windows pooled, beside the median and spread of the windows' own p99s), what A sent,
 * the gateway's event-loop delay and the CPU each group used; then B's p99 against B alone, pooled
 * and per round, with B alone against B alone (the run's own noise) as the first row.
 */
import { seededRandom } from '../lib/seeded-random.js';
import { median, quantile, round, spread } from '../lib/stats.js';
import { ROUND, type Phase, type Window } from './schedule.js';
import type { TenantALoadResult } from './tenant-a-load.js';
import { MAX_HELD_SHARE, PROBE_HOLD_MS, withoutProbeHeld } from './probe-hold.js';
import { CUT_OFF_AFTER_MS, SERIES, type ProbeWindow, type Series } from './tenant-b-probe.js';
import type { WindowReading } from './window-monitor.js';

/** Issue 29's goal: a tenant at its limits raises another's p99 by 10% at most. */
export const ISSUE_GOAL_RATIO = 1.1;

export interface IsolationRun {
  windows: readonly Window[];
  probe: readonly ProbeWindow[];
  readings: readonly WindowReading[];
  aLoad: TenantALoadResult;
  seconds: number;
}

/** What the ratios are computed from: the windows and B's samples in each. */
type Samples = Pick<IsolationRun, 'windows' | 'probe'>;
/** Per window, how many samples of each series were left out as sent late by the probe. */
type HeldOut = ReadonlyArray<Record<Series, number>>;

/** A row's windows: a phase's, or one of the two 'alone' windows of each round (its place in ROUND). */
type Selector = { phase: Phase } | { aloneAt: number };
const [FIRST_ALONE, SECOND_ALONE] = ROUND.flatMap((phase, i) => (phase === 'alone' ? [i] : []));
const selects = (selector: Selector, window: Window, index: number): boolean =>
  'phase' in selector ? window.phase === selector.phase : index % ROUND.length === selector.aloneAt;

/** The windows `selector` picks, of every round or of `rounds` only (a round drawn twice counts twice). */
function indexes(run: Samples, selector: Selector, rounds?: readonly number[]): number[] {
  const picked = (round: number) =>
    run.windows.flatMap((w, i) => (selects(selector, w, i) && w.round === round ? [i] : []));
  return (rounds ?? [...new Set(run.windows.map((w) => w.round))]).flatMap(picked);
}

/**
 * The 5th and 95th percentiles of `ratio` over rounds drawn with replacement (a bootstrap over
 * rounds: a slow stretch of the shared machine falls on a round, not on single requests).
 */
export function roundsInterval(rounds: number, ratio: (rounds: number[]) => number): [number, number] {
  const random = seededRandom(29);
  const draws = Array.from({ length: 400 }, () =>
    ratio(Array.from({ length: rounds }, () => Math.floor(random() * rounds))),
  );
  const finite = draws.filter(Number.isFinite);
  return [quantile(finite, 0.05), quantile(finite, 0.95)];
}

const p99Ms = (run: Samples, at: number[], series: Series): number =>
  quantile(
    at.flatMap((i) => run.probe[i]!.latenciesUs[series]),
    0.99,
  ) / 1000;

/** Median [spread] of `values`, leaving out a window that had no sample (every request of it cut off). */
const figure = (values: number[], digits = 1): string => {
  const finite = values.filter(Number.isFinite);
  return `${round(median(finite), digits)} [${spread(finite, digits)}]`;
};

type Ratio = (of?: readonly number[]) => number;
interface Row {
  label: string;
  selector: Selector;
  against: Selector;
  goal: string;
}

/** B alone against B alone (the run's noise) first, then each phase with A against B alone. */
function rowsOf(run: Samples): Row[] {
  const phases: Phase[] = [...new Set(run.windows.map((w) => w.phase))];
  return [
    {
      label: "alone (a round's 2nd) vs alone (its 1st)",
      selector: { aloneAt: SECOND_ALONE! },
      against: { aloneAt: FIRST_ALONE! },
      goal: 'the noise: 1.00x',
    },
    ...phases
      .filter((p) => p !== 'alone')
      .map((phase) => ({
        label: phase,
        selector: { phase },
        against: { phase: 'alone' as Phase },
        goal: phase === 'A at its limits' ? `<= ${ISSUE_GOAL_RATIO}x (publish, read)` : 'none',
      })),
  ];
}

/** B's p99 of `series` in `row`'s windows over that in its `against` windows, of every round or some. */
const ratioOf =
  (run: Samples, row: Row, series: Series): Ratio =>
  (of) =>
    p99Ms(run, indexes(run, row.selector, of), series) / p99Ms(run, indexes(run, row.against, of), series);

const roundsOf = (run: Samples): number => Math.max(...run.windows.map((w) => w.round)) + 1;

/**
 * Issue 29's verdict on B's publish and read p99 with A at its limits against B alone: met when
 * both 90% intervals lie under the goal, missed when one lies above it; undecided when one
 * straddles it, when the run's own noise (B alone against B alone) is wider than the goal's 10%, or
 * when some of B's requests were cut off (the p99s would leave the slowest out).
 */
export function verdict(run: Samples, heldOut?: HeldOut): string {
  const [noiseRow, ...phaseRows] = rowsOf(run);
  const goalRow = phaseRows.find((row) => row.label === 'A at its limits');
  if (!noiseRow || !goalRow) return "undecided: the run has no 'A at its limits' windows";
  const cutOff = run.probe.reduce((n, w) => n + w.cutOff, 0);
  if (cutOff > 0)
    return `undecided: ${cutOff} of B's requests were cut off unanswered or unsent (the machine held the probe or the gateway back by over ${CUT_OFF_AFTER_MS / 1000} s), and the p99s leave them out`;
  if (heldOut) {
    const overShare = (['alone', 'A at its limits'] as const).flatMap((phase) => {
      const shares = (['publish', 'read'] as const).map((series) => heldShare(run, heldOut, phase, series));
      return shares.some((share) => share > MAX_HELD_SHARE)
        ? [`${shares.map((share) => `${(share * 100).toFixed(2)}%`).join(' / ')} in '${phase}'`]
        : [];
    });
    if (overShare.length > 0)
      return `undecided: the probe itself sent over ${PROBE_HOLD_MS} ms late (its own work, GC or a CPU it did not get) ${overShare.join(', ')} of B's publishes / reads, more than the ${MAX_HELD_SHARE * 100}% that can be left out without being the p99's tail`;
  }
  const rounds = roundsOf(run);
  const of = (row: Row) =>
    (['publish', 'read'] as const).map((series) => roundsInterval(rounds, ratioOf(run, row, series)));
  const noise = of(noiseRow);
  if (noise.some(([low, high]) => low < 1 / ISSUE_GOAL_RATIO || high > ISSUE_GOAL_RATIO))
    return `undecided: this run's noise, B alone against B alone, spans ${noise.map(([l, h]) => `${l.toFixed(2)}-${h.toFixed(2)}x`).join(' and ')}, wider than the goal's 10% (a quieter machine or more rounds)`;
  const goal = of(goalRow);
  if (goal.every(([, high]) => high <= ISSUE_GOAL_RATIO)) return 'met';
  if (goal.some(([low]) => low > ISSUE_GOAL_RATIO)) return 'MISSED';
  return 'undecided: the interval straddles the goal';
}

/** The share of `phase`'s samples of `series` left out as sent late by the probe. */
function heldShare(run: Samples, heldOut: HeldOut, phase: Phase, series: Series): number {
  const at = indexes(run, { phase });
  const held = at.reduce((n, i) => n + heldOut[i]![series], 0);
  return held / (held + at.reduce((n, i) => n + run.probe[i]!.latenciesUs[series].length, 0));
}

export function printReport(all: IsolationRun): void {
  // Every figure below counts B's samples from their send and leaves out those the probe itself
  // sent late (probe-hold.ts), counted here.
  const { probe, heldOut } = withoutProbeHeld(all.probe);
  const run = { ...all, probe };
  const phases: Phase[] = [...new Set(run.windows.map((w) => w.phase))];
  const rounds = roundsOf(run);
  console.log(
    `\n| phase | B samples (publish, read) | B publish p50 / p99 ms | B read p50 / p99 ms | direct p99 ms: B Redis, B engine | A sent/s (429s) | gateway loop delay p99 / max ms | CPU % of a core: gateway, A Redis+engine+load, B probe | machine busy % | B probe loop p99 ms | sent over ${PROBE_HOLD_MS} ms late by the probe, left out (publish, read) |`,
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const phase of phases) {
    const at = indexes(run, { phase });
    const pooled = (series: Series, q: number) =>
      round(
        quantile(
          at.flatMap((i) => run.probe[i]!.latenciesUs[series]),
          q,
        ) / 1000,
        2,
      );
    const perWindowP99 = (series: Series) => figure(at.map((i) => p99Ms(run, [i], series)));
    const reading = (pick: (r: WindowReading) => number, digits = 0) =>
      figure(
        at.map((i) => pick(run.readings[i]!)),
        digits,
      );
    const aSent = run.aLoad.sent.filter((s) => at.includes(s.window));
    const samples = (series: Series) => at.reduce((n, i) => n + run.probe[i]!.latenciesUs[series].length, 0);
    console.log(
      `| ${phase} | ${samples('publish')}, ${samples('read')} | ${pooled('publish', 0.5)} / ${pooled('publish', 0.99)} (${perWindowP99('publish')}) | ${pooled('read', 0.5)} / ${pooled('read', 0.99)} (${perWindowP99('read')}) | ${pooled('redis', 0.99)}, ${pooled('engine', 0.99)} | ${round(median(aSent.map((s) => s.requests / run.seconds)) || 0)} (${aSent.reduce((n, s) => n + s.refused, 0)}) | ${reading((r) => r.gatewayLagP99Ms, 1)} / ${reading((r) => r.gatewayLagMaxMs, 1)} | ${reading((r) => r.cpuPercent.gateway!)}, ${reading((r) => r.cpuPercent['A Redis']! + r.cpuPercent['A engine']! + r.cpuPercent['A load']!)}, ${reading((r) => r.cpuPercent['B probe']!)} | ${reading((r) => r.machineBusyPercent)} | ${figure(at.map((i) => run.probe[i]!.probeLoopP99Ms))} | ${(['publish', 'read'] as const).map((series) => `${at.reduce((n, i) => n + heldOut[i]![series], 0)} (${(heldShare(run, heldOut, phase, series) * 100).toFixed(2)}%)`).join(', ')} |`,
    );
  }

  console.log(
    "\nThe gateway's CPU, per window (median [spread]): its event loop's thread ran / was ready but waited for the CPU (% of the window), its other threads (V8's GC helpers, libuv's pool) and everything outside the groups pinned there (other engineers' processes the kernel moved onto it; not meaningful when A's processes are moved there) (% of a core)",
  );
  console.log('| phase | loop ran % | loop waited % | gateway helper threads % | outsiders on its CPU % |');
  console.log('|---|---|---|---|---|');
  for (const phase of phases) {
    const at = indexes(run, { phase });
    const shared = (pick: (r: WindowReading['sharedCpu']) => number) =>
      figure(at.map((i) => pick(run.readings[i]!.sharedCpu)));
    console.log(
      `| ${phase} | ${shared((r) => r.loopRanPercent)} | ${shared((r) => r.loopWaitedPercent)} | ${shared((r) => r.helperThreadsPercent)} | ${shared((r) => r.outsidersPercent)} |`,
    );
  }

  console.log(
    `\nB's p99 against B alone: the p99 of all the phase's samples over that of all the 'alone' windows' (90% interval, rounds drawn with replacement); then the median and spread of the ${rounds} rounds' own ratios`,
  );
  console.log(
    `| phase | ${SERIES.map((s) => (s === 'redis' || s === 'engine' ? `direct ${s}` : s)).join(' | ')} | goal |`,
  );
  console.log(`|---|${SERIES.map(() => '---|').join('')}---|`);
  const cell = (ratio: Ratio): string => {
    const [low, high] = roundsInterval(rounds, ratio);
    const perRound = Array.from({ length: rounds }, (_, r) => ratio([r]));
    return `${ratio().toFixed(2)}x (${low.toFixed(2)}-${high.toFixed(2)}); ${figure(perRound, 2).replace(' ', 'x ')}`;
  };
  const rows = rowsOf(run);
  for (const row of rows)
    console.log(
      `| ${row.label} | ${SERIES.map((series) => cell(ratioOf(run, row, series))).join(' | ')} | ${row.goal} |`,
    );
  console.log(
    `\nIssue 29's goal, B's p99 with A at its limits <= ${ISSUE_GOAL_RATIO}x alone: ${verdict(run, heldOut)}`,
  );
  console.log(
    `(with every sample counted, from its scheduled send, those the probe sent over ${PROBE_HOLD_MS} ms late too: ${verdict({ windows: all.windows, probe: all.probe })})`,
  );

  // What the gateway adds beyond the machine: B's ratio through the gateway over the ratio of the
  // same tenant's backend asked directly (a publish is B's Redis's work, a read B's engine's).
  console.log(
    "\nThe gateway's share: B's p99 ratio through the gateway over its backend's asked directly (publish / direct Redis, read / direct engine); 1.00x: the gateway adds nothing to what the machine does to B",
  );
  console.log('| phase | publish / direct Redis | read / direct engine |');
  console.log('|---|---|---|');
  for (const row of rows) {
    const share = (through: Series, direct: Series): Ratio => {
      const [a, b] = [ratioOf(run, row, through), ratioOf(run, row, direct)];
      return (of) => a(of) / b(of);
    };
    console.log(`| ${row.label} | ${cell(share('publish', 'redis'))} | ${cell(share('read', 'engine'))} |`);
  }
  const errors = run.probe.reduce((n, w) => n + w.errors, 0);
  const cutOff = run.probe.reduce((n, w) => n + w.cutOff, 0);
  console.log(`\nB's errors (failed or non-2xx): ${errors}`);
  console.log(
    `B's requests cut off by the run's end (scheduled in a window, unsent or unanswered ${CUT_OFF_AFTER_MS / 1000} s after the last; not in the p99s): ${cutOff}`,
  );
}
