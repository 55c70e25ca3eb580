/**
 * Preloaded (node --import) into a process of the tenant-isolation bench when BENCH_TRACE names a
 * folder: writes each garbage collection and each stall of the event loop, on the wall clock, to
 * <folder>/<SETTEE_TRACE_NAME>.trace, so a slow sample of B's can be laid beside what its
 * processes were doing. A stall is a 5 ms timer late by more than 2 ms; beside its length it
 * records what the main thread did meanwhile (from /proc/thread-self/schedstat): how long it ran
 * (its own work: JavaScript, GC) and how long it waited for a CPU (the machine's).
 *   gc <epoch ms> <ms> <kind>          stall <epoch ms> <late ms> <ran ms> <waited ms>
 */
import fs from 'node:fs';
import path from 'node:path';

const folder = process.env.BENCH_TRACE;
if (folder) {
  const file = path.join(folder, `${process.env.SETTEE_TRACE_NAME ?? process.pid}.trace`);
  const lines = [];
  const epoch = (at) => (performance.timeOrigin + at).toFixed(1);
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      lines.push(
        `gc ${epoch(entry.startTime)} ${entry.duration.toFixed(2)} ${entry.detail?.kind ?? entry.kind}`,
      );
  }).observe({ entryTypes: ['gc'] });
  const schedstat = () => {
    const [ran, waited] = fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
    return { ran: ran / 1e6, waited: waited / 1e6 };
  };
  const TICK_MS = 5;
  let last = performance.now();
  let lastStat = schedstat();
  setInterval(() => {
    const now = performance.now();
    const stat = schedstat();
    const late = now - last - TICK_MS;
    if (late > 2)
      lines.push(
        `stall ${epoch(last + TICK_MS)} ${late.toFixed(1)} ${(stat.ran - lastStat.ran).toFixed(1)} ${(stat.waited - lastStat.waited).toFixed(1)}`,
      );
    [last, lastStat] = [now, stat];
  }, TICK_MS).unref();
  const flush = () => {
    if (lines.length > 0) fs.appendFileSync(file, `${lines.splice(0).join('\n')}\n`);
  };
  setInterval(flush, 1000).unref();
  process.on('exit', flush);
}
