/**
 * Each wake of bench/cold-start.ts broken into its steps from the API watches
 * (bench/lib/wake-timeline.ts), and the platform's part of it: those steps less the engine's own work.
 */
import { median, quantile, round } from '../lib/stats.js';
import type { WakeMilestones } from '../lib/wake-timeline.js';

/** One wake's request as the bench saw it: its time to the answer and the gateway's hold. */
export interface WakeAnswer {
  ms: number;
  /** X-Settee-Cold-Start: how long the gateway held the request. */
  coldStartHeader: number | undefined;
  /** Server-Timing upstream: the engine's own time for it, dispatch to response head (a released request). */
  upstreamMs: number | undefined;
}

/** The engine started alone just before a wake (same load). */
export interface EngineAlone {
  /** Spawn to the first 200 from /_up, polled every 5 ms: the engine's start-to-ready. */
  readyMs: number;
  /** Spawn to the answer of the request the wakes send, sent as soon as /_up answers. */
  firstAnswerMs: number;
}

/** The gaps between the steps of one wake, in ms (NaN where a step was not seen). */
export interface WakeSteps {
  requestToAnnotation: number;
  annotationToScaledUp: number;
  /** The request sent -> the StatefulSet at 1, whoever wrote it (the gateway's Scale or the operator's). */
  requestToScaledUp: number;
  scaledUpToPod: number;
  podToScheduled: number;
  scheduledToRunning: number;
  /**
   * Bound -> the engine's process started: the stand-in's reaction, the container's files, and the
   * start (its ready process told to exec the engine, local/process-launcher.ts; the exec itself is
   * counted in the boot after it, as the boot of the engine alone counts its spawn).
   */
  scheduledToStarted: number;
  /** The engine's boot inside the wake: spawned -> its first 200 from /_up. */
  startedToEngineUp: number;
  runningToReleased: number;
  engineUpToReleased: number;
  releasedToResponse: number;
  /** The engine's part of releasedToResponse: its first request, as the gateway timed it (Server-Timing). */
  engineFirstRequest: number;
}

export function wakeSteps(sentAt: number, answer: WakeAnswer, seen: WakeMilestones): WakeSteps {
  const gap = (from: number | undefined, to: number | undefined): number =>
    from === undefined || to === undefined ? Number.NaN : to - from;
  // The gateway holds the request from its arrival (a fraction of a millisecond after sending)
  // until it releases it; X-Settee-Cold-Start is that hold.
  const releasedAt = sentAt + (answer.coldStartHeader ?? Number.NaN);
  return {
    requestToAnnotation: gap(sentAt, seen.annotated),
    annotationToScaledUp: gap(seen.annotated, seen.scaledUp),
    requestToScaledUp: gap(sentAt, seen.scaledUp),
    scaledUpToPod: gap(seen.scaledUp, seen.podCreated),
    podToScheduled: gap(seen.podCreated, seen.podScheduled),
    scheduledToRunning: gap(seen.podScheduled, seen.podRunning),
    scheduledToStarted: gap(seen.podScheduled, seen.containerStarted),
    startedToEngineUp: gap(seen.containerStarted, seen.engineUp),
    runningToReleased: gap(seen.podRunning, releasedAt),
    engineUpToReleased: gap(seen.engineUp, releasedAt),
    releasedToResponse: gap(releasedAt, sentAt + answer.ms),
    engineFirstRequest: answer.upstreamMs ?? Number.NaN,
  };
}

/** Issue 26's goal for the platform's part of a wake (everything but the engine's own start), at p95. */
const PLATFORM_PART_GOAL_P95_MS = 50;

/**
 * The platform's steps of each wake: those the API shows, then start (bound -> the engine's process
 * spawned: what a kubelet does before the container runs; the Running report with the pod's IP is
 * sent meanwhile and is on the path only if it reaches the gateway after the engine is up, which
 * release would show), then release (the engine's first 200 from
 * /_up to the gateway releasing the held request: its probing and its watch of the pod), then
 * response less the engine's own time for that request, as the gateway timed it from dispatch to
 * the response head (Server-Timing): the gateway's forward. Spawn -> engine up is the engine's
 * boot, not counted; nor is its first request (auth, first document read).
 * Where the gateway sent no timing, the engine's first request is taken from the engine alone
 * (/_up -> first answer, just before this wake, same load): two engines' first requests, so that
 * estimate's spread is theirs, not the forward's.
 */
export function platformSteps(steps: WakeSteps, alone: EngineAlone): Record<string, number> {
  const engineFirstRequest = Number.isNaN(steps.engineFirstRequest)
    ? alone.firstAnswerMs - alone.readyMs
    : steps.engineFirstRequest;
  return {
    annotation: steps.requestToAnnotation,
    scale: steps.annotationToScaledUp,
    pod: steps.scaledUpToPod,
    bind: steps.podToScheduled,
    start: steps.scheduledToStarted,
    release: steps.engineUpToReleased,
    response: steps.releasedToResponse - engineFirstRequest,
  };
}

/** p50 and p95 of each platform step and of their sum, beside the goal for the sum. */
export function platformPart(perWake: ReadonlyArray<Record<string, number>>): Record<string, unknown> {
  const names = Object.keys(perWake[0] ?? {});
  const of = (values: number[]) => {
    const seen = values.filter((ms) => !Number.isNaN(ms));
    return { p50: round(quantile(seen, 0.5), 1), p95: round(quantile(seen, 0.95), 1) };
  };
  const sum = of(perWake.map((wake) => Object.values(wake).reduce((a, b) => a + b, 0)));
  return {
    note: `each step's p50/p95 over the wakes; the sum per wake is the platform's part (goal: p95 <= ${PLATFORM_PART_GOAL_P95_MS} ms, issue 26)`,
    ...Object.fromEntries(names.map((name) => [name, of(perWake.map((wake) => wake[name] ?? Number.NaN))])),
    sum: { ...sum, goalP95: PLATFORM_PART_GOAL_P95_MS, met: sum.p95 <= PLATFORM_PART_GOAL_P95_MS },
  };
}

function medianOf(steps: readonly WakeSteps[], step: keyof WakeSteps): number {
  return round(median(steps.map((s) => s[step]).filter((ms) => !Number.isNaN(ms))), 1);
}

/** The median of each step over the wakes. */
export function wakeStepMedians(steps: readonly WakeSteps[]): Record<string, number> {
  const names = Object.keys(steps[0] ?? {}) as Array<keyof WakeSteps>;
  return Object.fromEntries(names.map((name) => [name, medianOf(steps, name)]));
}
