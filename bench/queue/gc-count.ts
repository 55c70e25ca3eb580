import { waitFor } from '../../local/wait.js';

/**
 * The garbage a process makes, counted from V8's own trace: a process started with
 * GC_TRACE_FLAGS prints one line per collection with the bytes allocated since the one before, and
 * a GcCount fed those lines (startProcess's onLine) sums them. Unlike CPU time or latency, the
 * bytes a message costs do not move with the machine's load, so a change that allocates less shows
 * beyond the spread of a shared machine (docs/queue.md, Performance).
 */
export const GC_TRACE_FLAGS = ['--trace-gc-nvp'];

/** A data: module, so that a bundle run by plain node needs no file beside it. */
const FULL_GC_ON_SIGNAL = `data:text/javascript,process.on('SIGUSR2', () => globalThis.gc())`;

/**
 * The trace's flags, and a full GC on SIGUSR2 ({@link forceFullGc}): a measurement between two full
 * GCs counts exactly what its work allocated, none of it left over from before.
 */
export const FULL_GC_TRACE_FLAGS = [...GC_TRACE_FLAGS, '--expose-gc', '--import', FULL_GC_ON_SIGNAL];

/** What a process allocated and how many young-generation collections (scavenges) that took. */
export interface GcTotals {
  allocatedBytes: number;
  scavenges: number;
}

export class GcCount implements GcTotals {
  allocatedBytes = 0;
  scavenges = 0;
  /** Mark-compacts: a forced full GC is one. */
  fullGcs = 0;

  /** One line of the process's output; lines other than V8's trace are ignored. */
  readonly onLine = (line: string): void => {
    const allocated = /\ballocated=(\d+)/.exec(line);
    if (allocated === null) return;
    this.allocatedBytes += Number(allocated[1]);
    if (/\bgc=s\b/.test(line)) this.scavenges += 1;
    else if (/\bgc=mc\b/.test(line)) this.fullGcs += 1;
  };

  totals(): GcTotals {
    return { allocatedBytes: this.allocatedBytes, scavenges: this.scavenges };
  }
}

/** A full GC in `pid`, started with FULL_GC_TRACE_FLAGS and its output fed to `gc`, done. */
export async function forceFullGc(pid: number, gc: GcCount): Promise<void> {
  const wanted = gc.fullGcs + 1;
  process.kill(pid, 'SIGUSR2');
  await waitFor('a full GC', async () => (gc.fullGcs >= wanted ? true : undefined), { timeoutMs: 30_000 });
}

/** A process's garbage per message: KB allocated, and scavenges per 1,000 messages. */
export interface Garbage {
  kb: number;
  scavengesPer1k: number;
}

/** Per message between two readings. */
export function garbagePerMessage(before: GcTotals, after: GcTotals, messages: number): Garbage {
  return {
    kb: (after.allocatedBytes - before.allocatedBytes) / 1_024 / messages,
    scavengesPer1k: ((after.scavenges - before.scavenges) * 1_000) / messages,
  };
}
