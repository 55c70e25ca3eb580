import { createHash } from 'node:crypto';
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

/**
 * Runs kept by the whole process, and their config and payload bytes: the oldest go first past
 * either. One cache, not one per binding database, so its memory does not grow with the tenants
 * (500 bindings with a cache each could hold 500 times this).
 */
const MAX_RUNS = 4096;
const MAX_BYTES = 8 * 1024 * 1024;

export function configShaOf(configJson: string | Buffer): string {
  return createHash('sha1').update(configJson).digest('hex');
}

/**
 * The runs this replica knows, of every binding database, by their database and their hash's key
 * (keys.ts workflowRun), oldest first. A database is named by its connection (one per binding:
 * database-connections.ts), so two bindings with the same key prefix, or a binding whose connection
 * was replaced, never share an entry; a replaced connection's entries go as the oldest.
 */
export class KnownWorkflowRuns {
  private readonly runs = new Map<string, { run: KnownWorkflowRun; bytes: number }>();
  private readonly databases = new WeakMap<object, number>();
  private lastDatabase = 0;
  private bytes = 0;

  constructor(private readonly limits = { maxRuns: MAX_RUNS, maxBytes: MAX_BYTES }) {}

  get(database: object, runKey: string): KnownWorkflowRun | undefined {
    return this.runs.get(this.keyOf(database, runKey))?.run;
  }

  /** Remembers `run` as its config JSON `configJson` (a string or the bytes Redis answered) gives it. */
  remember(database: object, runKey: string, run: KnownWorkflowRun, configJson: string | Buffer): void {
    const key = this.keyOf(database, runKey);
    this.forget(key);
    // Bytes both ways: a config read back from Redis comes as a Buffer, a started one as a string.
    const bytes = Buffer.byteLength(configJson) + (run.initialBody?.length ?? 0);
    if (bytes > this.limits.maxBytes) return;
    this.runs.set(key, { run, bytes });
    this.bytes += bytes;
    for (const [oldest] of this.runs) {
      if (this.runs.size <= this.limits.maxRuns && this.bytes <= this.limits.maxBytes) break;
      this.forget(oldest);
    }
  }

  private keyOf(database: object, runKey: string): string {
    let id = this.databases.get(database);
    if (id === undefined) this.databases.set(database, (id = ++this.lastDatabase));
    return `${id} ${runKey}`;
  }

  private forget(key: string): void {
    const known = this.runs.get(key);
    if (known === undefined) return;
    this.runs.delete(key);
    this.bytes -= known.bytes;
  }
}

/** The runs this replica knows, in every binding's database. */
export const knownWorkflowRuns = new KnownWorkflowRuns();
