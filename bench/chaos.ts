/**
 * `make chaos`: the chaos soak (bench/chaos/soak.ts) on the local platform, with its report table.
 * CHAOS_MINUTES (10), CHAOS_FAULTS_PER_MINUTE (4), CHAOS_SEED (a random one, printed for replay),
 * CHAOS_REDIS_APPENDFSYNC (always: a killed Redis loses nothing it answered; everysec, Redis's and
 * a tenant's default, may lose up to ~2 s of answered writes to each kill-redis by design).
 * Exits 1 when an acknowledged publish or write was lost, a delivery came before its delay, a
 * parallelism was exceeded, an instance ended neither Running nor Hibernated, or a process leaked.
 */
import { formatSoakReport, soakFailures } from './chaos/report.js';
import { runChaosSoak } from './chaos/soak.js';

const minutes = Number(process.env.CHAOS_MINUTES ?? 10);
const faultsPerMinute = Number(process.env.CHAOS_FAULTS_PER_MINUTE ?? 4);
const appendfsync = process.env.CHAOS_REDIS_APPENDFSYNC ?? 'always';
const seed = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
if (
  !(minutes > 0) ||
  !(faultsPerMinute > 0) ||
  !Number.isInteger(seed) ||
  (appendfsync !== 'always' && appendfsync !== 'everysec')
) {
  console.error(
    'CHAOS_MINUTES and CHAOS_FAULTS_PER_MINUTE must be positive numbers, CHAOS_SEED an integer, CHAOS_REDIS_APPENDFSYNC always or everysec',
  );
  process.exit(2);
}
const report = await runChaosSoak({
  minutes,
  faultsPerMinute,
  seed,
  redisAppendfsync: appendfsync,
  log: (m) => console.log(`[chaos] ${m}`),
});
console.log(`\n${formatSoakReport(report)}`);
const failures = soakFailures(report);
if (failures.length > 0) console.error(`\nchaos soak failed: ${failures.join('; ')}`);
process.exit(failures.length > 0 ? 1 : 0);
