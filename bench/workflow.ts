/**
 * Upstash Workflow on the queue (issue 28's benchmarks), through the unchanged @upstash/workflow
 * 1.3.3: its Client triggers, its Express serve() runs the steps (in this process, verifying every
 * delivery's signature), one gateway process (delivery workers on) on a Redis with AOF everysec
 * (workflow/workflow-bench-harness.ts).
 *   1. A 10-step sequential workflow against 10 plain publish-and-deliver round trips, alternating
 *      (workflow/workflow-sequential-round.ts): each step's time against a round trip's, p50 and p99,
 *      as ratios, with the step split into the queue's part and the SDK's handler; and a run end to
 *      end (trigger to the gateway's finish) against 10 round trips one after another.
 *   2. N runs at once of a 5-step workflow with a parallel fan-out of 10, against as many plain
 *      messages (workflow/workflow-fan-out-round.ts): runs/s, steps/s, p99 run time, Redis memory per
 *      finished run, gateway CPU per step.
 *   3. W runs waiting on an event each, then notified (workflow/workflow-notify-round.ts):
 *      notify-to-resume latency p50/p99, beside part 1's plain round trip.
 * Figures are medians of the rounds with their spread; the summary sets each beside its goal.
 *
 *   npx tsx bench/workflow.ts   (WORKFLOW_BENCH_ROUNDS=5 rounds of WORKFLOW_BENCH_RUNS=4 sequential
 *                                runs; WORKFLOW_BENCH_CONCURRENT=50 runs at once in
 *                                WORKFLOW_BENCH_FANOUT_ROUNDS=3 rounds; WORKFLOW_BENCH_WAITERS=200)
 */
import os from 'node:os';
import { median, quantile, round, spread } from './lib/stats.js';
import { startWorkflowHarness } from './workflow/workflow-bench-harness.js';
import {
  concurrentRound,
  fanOutWorkflow,
  FANOUT,
  FANOUT_STEPS,
  type ConcurrentRound,
} from './workflow/workflow-fan-out-round.js';
import { NOTIFY_IN_FLIGHT, notifyRound, waiterWorkflow } from './workflow/workflow-notify-round.js';
import {
  recordArrival,
  SEQUENTIAL_STEPS as STEPS,
  sequentialRound,
  sequentialWorkflow,
  type SequentialRound,
} from './workflow/workflow-sequential-round.js';

const ROUNDS = Number(process.env.WORKFLOW_BENCH_ROUNDS ?? '5');
const RUNS_PER_ROUND = Number(process.env.WORKFLOW_BENCH_RUNS ?? '4');
const CONCURRENT = Number(process.env.WORKFLOW_BENCH_CONCURRENT ?? '50');
const FANOUT_ROUNDS = Number(process.env.WORKFLOW_BENCH_FANOUT_ROUNDS ?? '3');
const WAITERS = Number(process.env.WORKFLOW_BENCH_WAITERS ?? '200');
const BATCH = 100;
/** Issue 28's goal: a workflow step costs at most 1.5x a plain publish-and-deliver round trip. */
const STEP_TO_ROUND_TRIP_GOAL = 1.5;

/** `[low-high]` of `values`, to stand beside their median. */
const bracketed = (values: number[], digits = 1): string => `[${spread(values, digits)}]`;

/** A summary line: the figure, its goal, and MISSED when it is not met. */
function goalLine(name: string, figure: string, goal: string, met?: boolean): void {
  const verdict = met === undefined ? '' : met ? 'met' : 'MISSED';
  console.log(`  ${name.padEnd(46)} ${figure.padEnd(44)} ${goal.padEnd(26)} ${verdict}`);
}

/** Each round's quantiles of part 1: a step, its two parts, a round trip, a run and a chain. */
function sequentialFigures(r: SequentialRound) {
  return {
    stepP50: quantile(r.stepMs, 0.5),
    stepP99: quantile(r.stepMs, 0.99),
    queueP50: quantile(r.queueMs, 0.5),
    queueP99: quantile(r.queueMs, 0.99),
    sdkP50: quantile(r.sdkMs, 0.5),
    sdkP99: quantile(r.sdkMs, 0.99),
    tripP50: quantile(r.roundTripMs, 0.5),
    tripP99: quantile(r.roundTripMs, 0.99),
    run: median(r.runMs),
    chain: median(r.chainMs),
  };
}

const of = <T>(rows: T[], pick: (row: T) => number): number[] => rows.map(pick);

/** A ratio's goal line: the median of the rounds' ratios, their spread, and the two medians. */
function ratioLine(
  name: string,
  rows: ReturnType<typeof sequentialFigures>[],
  pick: {
    part: (r: ReturnType<typeof sequentialFigures>) => number;
    anchor: (r: ReturnType<typeof sequentialFigures>) => number;
  },
  goal = true,
): void {
  const ratios = of(rows, (r) => pick.part(r) / pick.anchor(r));
  goalLine(
    name,
    `${round(median(ratios), 2)}x ${bracketed(ratios, 2)} (${round(median(of(rows, pick.part)), 2)} / ${round(median(of(rows, pick.anchor)), 2)} ms)`,
    goal ? `≤ ${STEP_TO_ROUND_TRIP_GOAL}x` : 'where a step goes',
    goal ? median(ratios) <= STEP_TO_ROUND_TRIP_GOAL : undefined,
  );
}

/**
 * CPU per step (a run's over its steps: its trigger and its end included) against CPU per round
 * trip, over all rounds: the gateway's, and the endpoint process's, which for a step is the
 * SDK's serve() and client and for a round trip the QStash client and the receiver.
 */
function reportSequentialCpu(seq: SequentialRound[]): void {
  const total = (pick: (r: SequentialRound) => number) => seq.reduce((sum, r) => sum + pick(r), 0);
  const steps = total((r) => r.stepMs.length);
  const trips = total((r) => r.roundTripMs.length);
  for (const side of ['gateway', 'endpoint'] as const) {
    const step = total((r) => r.runCpuUs[side]) / steps;
    const trip = total((r) => r.chainCpuUs[side]) / trips;
    goalLine(
      `${side} CPU per step / per round trip`,
      `${round(step / trip, 2)}x (${Math.round(step)} / ${Math.round(trip)} µs)`,
      'where a step goes',
    );
  }
}

function reportFanOut(fan: ConcurrentRound[]): void {
  const noGoal = 'no goal in issue 28';
  goalLine(
    `runs/s, ${CONCURRENT} at once`,
    `${round(median(of(fan, (r) => r.runsPerSecond)), 1)} ${bracketed(of(fan, (r) => r.runsPerSecond))}`,
    noGoal,
  );
  const stepsRatio = of(fan, (r) => r.stepsPerSecond / r.plainPerSecond);
  goalLine(
    'steps/s (anchor: plain messages/s)',
    `${Math.round(median(of(fan, (r) => r.stepsPerSecond)))} ${bracketed(
      of(fan, (r) => r.stepsPerSecond),
      0,
    )}, ${round(median(stepsRatio), 2)}x of ${Math.round(median(of(fan, (r) => r.plainPerSecond)))}`,
    noGoal,
  );
  goalLine(
    'p99 run time',
    `${Math.round(median(of(fan, (r) => r.p99RunMs)))} ms ${bracketed(
      of(fan, (r) => r.p99RunMs),
      0,
    )}`,
    noGoal,
  );
  goalLine(
    'Redis memory per finished run',
    `${Math.round(median(of(fan, (r) => r.memoryPerRun)))} B ${bracketed(
      of(fan, (r) => r.memoryPerRun),
      0,
    )}: its keys ${Math.round(median(of(fan, (r) => r.runKeysPerRun)))} B, events ${Math.round(median(of(fan, (r) => r.eventsPerRun)))} B`,
    noGoal,
  );
  const cpuRatio = of(fan, (r) => r.cpuPerStepUs / r.cpuPerPlainUs);
  goalLine(
    'gateway CPU per step (anchor: per plain msg)',
    `${Math.round(median(of(fan, (r) => r.cpuPerStepUs)))} µs ${bracketed(
      of(fan, (r) => r.cpuPerStepUs),
      0,
    )}, ${round(median(cpuRatio), 2)}x of ${Math.round(median(of(fan, (r) => r.cpuPerPlainUs)))} µs`,
    noGoal,
  );
  goalLine(
    'Redis commands (script runs) per step / msg',
    `${round(median(of(fan, (r) => r.commandsPerStep)), 1)} (${round(median(of(fan, (r) => r.scriptsPerStep)), 2)}) / ${round(
      median(of(fan, (r) => r.commandsPerPlain)),
      1,
    )} (${round(median(of(fan, (r) => r.scriptsPerPlain)), 2)})`,
    noGoal,
  );
  goalLine(
    'bytes into Redis per step / per plain msg',
    `${Math.round(median(of(fan, (r) => r.redisBytesInPerStep)))} / ${Math.round(median(of(fan, (r) => r.redisBytesInPerPlain)))} B`,
    noGoal,
  );
}

async function main(): Promise<void> {
  const h = await startWorkflowHarness({
    workflows: {
      sequential: { route: sequentialWorkflow },
      fanout: { route: fanOutWorkflow },
      waiter: { route: waiterWorkflow },
    },
    batch: BATCH,
    onArrival: recordArrival,
  });
  try {
    const loadAtStart = os.loadavg()[0]!;
    console.log(
      `workflow benchmark: ${os.cpus().length} CPUs shared with other work, load average ${round(loadAtStart, 1)}; ` +
        `${ROUNDS} rounds of ${RUNS_PER_ROUND} ${STEPS}-step runs; ${FANOUT_ROUNDS} rounds of ${CONCURRENT} fan-out runs\n`,
    );

    // A warm-up round, not counted: connections opened, scripts loaded, code compiled.
    await sequentialRound(h, RUNS_PER_ROUND);

    const seq: SequentialRound[] = [];
    for (let i = 0; i < ROUNDS; i++) seq.push(await sequentialRound(h, RUNS_PER_ROUND));
    console.log(`1. ${STEPS}-step sequential workflow against ${STEPS} plain round trips, alternating:`);
    const perRound = seq.map(sequentialFigures);
    for (const [i, r] of perRound.entries())
      console.log(
        `  round ${i + 1}: step p50 ${round(r.stepP50, 2)} ms, p99 ${round(r.stepP99, 2)} ms (queue p50 ${round(r.queueP50, 2)}, SDK p50 ${round(r.sdkP50, 2)}); ` +
          `round trip p50 ${round(r.tripP50, 2)} ms, p99 ${round(r.tripP99, 2)} ms; run ${round(r.run, 1)} ms, ${STEPS} round trips ${round(r.chain, 1)} ms`,
      );

    const fan: ConcurrentRound[] = [];
    for (let i = 0; i < FANOUT_ROUNDS; i++)
      fan.push(await concurrentRound(h, { concurrent: CONCURRENT, batch: BATCH }));
    if (fan.length > 0) {
      console.log(
        `\n2. ${CONCURRENT} runs at once of a 5-step workflow with a fan-out of ${FANOUT} (${FANOUT_STEPS} step functions a run), then as many plain messages:`,
      );
      for (const [i, r] of fan.entries())
        console.log(
          `  round ${i + 1}: ${round(r.runsPerSecond, 1)} runs/s, ${Math.round(r.stepsPerSecond)} steps/s, p99 run ${Math.round(r.p99RunMs)} ms, ` +
            `Redis +${Math.round(r.memoryPerRun)} B per run (its keys ${Math.round(r.runKeysPerRun)} B, events +${Math.round(r.eventsPerRun)} B), gateway CPU ${Math.round(r.cpuPerStepUs)} µs/step, SDK side ${Math.round(r.sdkCpuPerStepUs)} µs/step; ` +
            `plain ${Math.round(r.plainPerSecond)} msgs/s, ${Math.round(r.cpuPerPlainUs)} µs/msg; ` +
            `Redis commands ${round(r.commandsPerStep, 1)}/step (${round(r.scriptsPerStep, 2)} scripts), ${round(r.commandsPerPlain, 1)}/msg (${round(r.scriptsPerPlain, 2)}); ` +
            `bytes into Redis ${Math.round(r.redisBytesInPerStep)}/step, ${Math.round(r.redisBytesInPerPlain)}/msg`,
        );
    }

    const notified = WAITERS > 0 ? await notifyRound(h, { waiters: WAITERS, batch: BATCH }) : [];
    if (WAITERS > 0)
      console.log(
        `\n3. ${WAITERS} runs waiting on an event each, notified ${NOTIFY_IN_FLIGHT} at a time: notify to resume p50 ${round(quantile(notified, 0.5), 2)} ms, p99 ${round(quantile(notified, 0.99), 2)} ms`,
      );

    console.log(
      `\nagainst the goals (load average ${round(loadAtStart, 1)} at the start, ${round(os.loadavg()[0]!, 1)} now, on a shared machine; medians of the rounds, their spread in brackets):`,
    );
    ratioLine('step / plain round trip, p50', perRound, { part: (r) => r.stepP50, anchor: (r) => r.tripP50 });
    ratioLine('step / plain round trip, p99', perRound, { part: (r) => r.stepP99, anchor: (r) => r.tripP99 });
    const trip = { anchor: (r: ReturnType<typeof sequentialFigures>) => r.tripP50 };
    ratioLine('  its queue part / round trip, p50', perRound, { part: (r) => r.queueP50, ...trip }, false);
    ratioLine('  its SDK part / round trip, p50', perRound, { part: (r) => r.sdkP50, ...trip }, false);
    ratioLine(
      '  its queue part / round trip, p99',
      perRound,
      { part: (r) => r.queueP99, anchor: (r) => r.tripP99 },
      false,
    );
    ratioLine(`run end to end / ${STEPS} round trips`, perRound, {
      part: (r) => r.run,
      anchor: (r) => r.chain,
    });
    reportSequentialCpu(seq);
    if (fan.length > 0) reportFanOut(fan);
    if (WAITERS > 0) {
      const tripP50 = median(of(perRound, (r) => r.tripP50));
      const tripP99 = median(of(perRound, (r) => r.tripP99));
      goalLine(
        `notify to resume, ${WAITERS} waiting, p50 / p99`,
        `${round(quantile(notified, 0.5), 1)} / ${round(quantile(notified, 0.99), 1)} ms (${round(quantile(notified, 0.5) / tripP50, 2)}x / ${round(quantile(notified, 0.99) / tripP99, 2)}x of a round trip)`,
        'no goal in issue 28',
      );
    }
  } finally {
    await h.stop();
  }
}

await main();
