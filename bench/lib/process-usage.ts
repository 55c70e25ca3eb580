/** What a benchmark reads about the processes it runs: CPU time and Redis command counts. */
import fs from 'node:fs';
import type { Command, Redis } from 'ioredis';

/** CPU seconds (user + system) a process, or one of its threads, has used so far, from /proc. */
export function cpuSeconds(pid: number, thread?: number): number {
  const stat = fs.readFileSync(`/proc/${pid}${thread === undefined ? '' : `/task/${thread}`}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime (fields 14 and 15) are in clock ticks, USER_HZ, which is 100 on Linux.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * The main thread's (the event loop's) time so far, in ms, from /proc/<pid>/task/<pid>/schedstat:
 * how long it ran, and how long it was ready to run but waited for a CPU.
 */
export function mainThreadMs(pid: number): { ran: number; waited: number } {
  const [ran, waited] = fs.readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ').map(Number);
  return { ran: ran! / 1e6, waited: waited! / 1e6 };
}

/** CPU seconds the Redis server has used so far. */
export async function redisCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string) => Number(info.match(new RegExp(`${name}:([\\d.]+)`))?.[1] ?? 0);
  return field('used_cpu_user') + field('used_cpu_sys');
}

/** Calls and microseconds so far per Redis command (INFO commandstats; commands run by scripts included). */
export async function commandUsage(redis: Redis): Promise<Map<string, { calls: number; usec: number }>> {
  const usage = new Map<string, { calls: number; usec: number }>();
  for (const [, name, calls, usec] of (await redis.info('commandstats')).matchAll(
    /cmdstat_([\w|]+):calls=(\d+),usec=(\d+)/g,
  ))
    usage.set(name ?? '', { calls: Number(calls), usec: Number(usec) });
  return usage;
}

/** Calls so far per Redis command (INFO commandstats; commands run by scripts included). */
export async function commandCalls(redis: Redis): Promise<Map<string, number>> {
  return new Map([...(await commandUsage(redis))].map(([name, { calls }]) => [name, calls]));
}

/**
 * Counts the commands `redis` sends from now on: round trips' worth of work for the client, where
 * a script run is one however many commands it runs inside Redis (those INFO commandstats counts).
 */
export function countSentCommands(redis: Redis): { readonly sent: number } {
  const counter = { sent: 0 };
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (command: Command, ...rest: unknown[]) => {
    counter.sent += 1;
    return (send as (command: Command, ...rest: unknown[]) => unknown)(command, ...rest);
  };
  return counter;
}
