/**
 * The windows of the tenant-isolation bench, shared by its processes on the wall clock: the
 * orchestrator writes one start time to a file once every process is ready, and each process runs
 * its part of every window from it. B's probe sends without a break and counts each request in the
 * window it was scheduled in (after its settling time), so B is measured the same way whatever A does.
 */
import fs from 'node:fs/promises';

/** What tenant A does during a window; B always sends the same. */
export type Phase = 'alone' | 'A at its limits' | "A at its limits, on the gateway's CPU" | 'A floods';

/**
 * One round, in order. 'alone' comes twice, so B alone is also set against B alone (the run's own
 * noise). 'A at its limits' is the comparison, with A's load, Redis and engine on a CPU
 * of their own as on nodes of their own in a cluster: what B loses then is what the gateway's
 * work for A costs it. "on the gateway's CPU" runs the same load with A's processes moved onto
 * the CPU of the gateway and B for the window: what this machine adds by sharing its cores. The
 * flood comes last, after the comparison, so its aftermath falls on the gap before the next round.
 */
export const ROUND: readonly Phase[] = [
  'alone',
  'A at its limits',
  'alone',
  "A at its limits, on the gateway's CPU",
  'A floods',
];

export interface Window {
  phase: Phase;
  round: number;
  /** Milliseconds after the run's start. */
  fromMs: number;
  toMs: number;
}

/** `rounds` rounds of ROUND, each window `seconds` long with `gapMs` between windows. */
export function buildWindows(rounds: number, seconds: number, gapMs: number): Window[] {
  const windows: Window[] = [];
  let at = 0;
  for (let round = 0; round < rounds; round++) {
    for (const phase of ROUND) {
      windows.push({ phase, round, fromMs: at, toMs: at + seconds * 1000 });
      at += seconds * 1000 + gapMs;
    }
  }
  return windows;
}

/**
 * How long a process waits for the start time: the orchestrator writes it seconds after both are
 * ready, so a longer wait means it failed or was killed, and the process ends instead of hanging.
 */
export const START_DEADLINE_MS = 120_000;

/** Waits for the orchestrator's start time (epoch ms) in `file`, polling; resolves with it. */
export async function waitForStart(file: string, deadlineMs = START_DEADLINE_MS): Promise<number> {
  const giveUpAt = Date.now() + deadlineMs;
  while (Date.now() < giveUpAt) {
    const text = await fs.readFile(file, 'utf8').catch(() => '');
    if (/^\d+$/.test(text.trim())) return Number(text.trim());
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no start time in ${file} within ${deadlineMs} ms (the orchestrator failed?)`);
}

/** Resolves at epoch ms `at` (at once when it has passed). */
export const sleepUntil = (at: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));

/** Runs `during(window, stop)` for each of `windows` from its start until its end, one after another. */
export async function runWindows<W extends Window, T>(
  startAt: number,
  windows: readonly W[],
  during: (window: W, stop: () => boolean) => Promise<T>,
): Promise<T[]> {
  const results: T[] = [];
  for (const window of windows) {
    await sleepUntil(startAt + window.fromMs);
    const endAt = startAt + window.toMs;
    results.push(await during(window, () => Date.now() >= endAt));
  }
  return results;
}
