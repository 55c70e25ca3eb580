/**
 * The garbage a process makes, counted from V8's own trace: a process started with
 * GC_TRACE_FLAGS prints one line per collection with the bytes allocated since the one before, and
 * a GcCount fed those lines (startProcess's onLine) sums them. Unlike CPU time or latency, the
 * bytes a message costs do not move with the machine's load, so a change that allocates less shows
 * beyond the spread of a shared machine (docs/queue.md, Performance).
 */
export const GC_TRACE_FLAGS = ['--trace-gc-nvp'];

/** What a process allocated and how many young-generation collections (scavenges) that took. */
export interface GcTotals {
  allocatedBytes: number;
  scavenges: number;
}

export class GcCount implements GcTotals {
  allocatedBytes = 0;
  scavenges = 0;

  /** One line of the process's output; lines other than V8's trace are ignored. */
  readonly onLine = (line: string): void => {
    const allocated = /\ballocated=(\d+)/.exec(line);
    if (allocated === null) return;
    this.allocatedBytes += Number(allocated[1]);
    if (/\bgc=s\b/.test(line)) this.scavenges += 1;
  };

  totals(): GcTotals {
    return { allocatedBytes: this.allocatedBytes, scavenges: this.scavenges };
  }
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
