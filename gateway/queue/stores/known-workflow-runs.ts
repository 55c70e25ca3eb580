import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { WorkflowRunConfig } from '../core/workflow-message.js';

/**
 * What a step's delivery needs of its run, as this replica last read or wrote it: a run's config and
 * creation time are fixed by its trigger, so a step of a run this replica started, or appended to
 * before, is built here and stored by the append's own script (append-workflow-step.ts) instead of
 * coming back from it to be stored by a second one. The script checks `createdAt` and `configSha`
 * against the run it appends to (a run id started again after its run was dropped has other ones)
 * and answers the run's settings when they differ, so a stale entry costs a round trip, never a
 * wrong delivery.
 */
export interface KnownWorkflowRun {
  createdAt: number;
  config: WorkflowRunConfig;
  /** SHA-1 (hex) of the config JSON as the run's hash holds it. */
  configSha: string;
  /** The run's payload (base64), kept only for a run with a failure callback, which carries it. */
  initialBody?: string;
}

/** Runs kept per database, and their config and payload bytes: the oldest go first past either. */
const MAX_RUNS = 4096;
const MAX_BYTES = 8 * 1024 * 1024;

export function configShaOf(configJson: string | Buffer): string {
  return createHash('sha1').update(configJson).digest('hex');
}

/** One database's known runs by their hash's key (keys.ts workflowRun), oldest first. */
export class KnownWorkflowRuns {
  private readonly runs = new Map<string, { run: KnownWorkflowRun; bytes: number }>();
  private bytes = 0;

  get(runKey: string): KnownWorkflowRun | undefined {
    return this.runs.get(runKey)?.run;
  }

  remember(runKey: string, run: KnownWorkflowRun, configBytes: number): void {
    this.forget(runKey);
    const bytes = configBytes + (run.initialBody?.length ?? 0);
    if (bytes > MAX_BYTES) return;
    this.runs.set(runKey, { run, bytes });
    this.bytes += bytes;
    for (const [oldest] of this.runs) {
      if (this.runs.size <= MAX_RUNS && this.bytes <= MAX_BYTES) break;
      this.forget(oldest);
    }
  }

  private forget(runKey: string): void {
    const known = this.runs.get(runKey);
    if (known === undefined) return;
    this.runs.delete(runKey);
    this.bytes -= known.bytes;
  }
}

const byDatabase = new WeakMap<Redis, KnownWorkflowRuns>();

/** The runs this replica knows in the database `redis` connects to (one connection per database). */
export function knownWorkflowRunsOf(redis: Redis): KnownWorkflowRuns {
  let known = byDatabase.get(redis);
  if (known === undefined) byDatabase.set(redis, (known = new KnownWorkflowRuns()));
  return known;
}
