import fsp from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@upstash/qstash';
import type { Redis } from 'ioredis';
import { QUEUE_CONFIG_DEFAULTS } from '../../gateway/queue/core/config.js';
import { DELIVERY_GROUP, queueKeys } from '../../gateway/queue/core/keys.js';
import type { FaultRecord } from './nemesis.js';
import type { Delivery } from './receiver.js';
import type { AckedPublish } from './workload.js';

/** Faults this long before a lost publish's ack, and after its due time, are listed with it. */
const FAULTS_BEFORE_MS = 15_000;
const FAULTS_AFTER_MS = 60_000;
/** Redis's own word that it wrote the append-only file late (an everysec fsync still running). */
const AOF_LATE_LINE = /Asynchronous AOF fsync is taking too long/;

/**
 * What the soak knows about each lost publish, as lines to print: its ack (+s from the soak's
 * start, as the fault log counts), the replica, kind, delay and due time, the message id, every
 * delivery the receiver recorded (any status), where its message stands in Redis (schedule,
 * scheduled messages, stream and its consumer group, the DLQ), its events as the gateway answers
 * them, and the faults around it. A loss with no trace anywhere points at Redis losing writes.
 */
export async function describeLostPublishes(options: {
  lost: AckedPublish[];
  deliveries: Map<string, Delivery[]>;
  faults: readonly FaultRecord[];
  startedAt: number;
  redis: Redis;
  token: string;
}): Promise<string[]> {
  const { startedAt, redis } = options;
  const keys = queueKeys(QUEUE_CONFIG_DEFAULTS.keyPrefix);
  const at = (ms: number): string => `+${((ms - startedAt) / 1000).toFixed(1)} s`;
  const lines: string[] = [];
  const deadLetters = Object.values(await redis.hgetall(keys.deadLetters).catch(() => ({})));
  for (const p of options.lost) {
    const id = p.messageId;
    lines.push(
      `lost ${p.kind} ${p.op}: acked ${at(p.ackedAt)} by ${p.url}, message ${id || '(no id)'}` +
        (p.delaySeconds !== undefined ? `, delay ${p.delaySeconds} s, not before ${at(p.notBefore)}` : ''),
    );
    const seen = options.deliveries.get(p.op) ?? [];
    lines.push(
      `  deliveries: ${
        seen
          .map(
            (d) =>
              `${at(d.at)} ${d.status} (retried ${d.retried}${d.messageId !== id ? `, ${d.messageId}` : ''})`,
          )
          .join('; ') || 'none'
      }`,
    );
    if (id) {
      const entry = await redis.hget(keys.streamIndex, id);
      const pending = entry
        ? ((await redis.xpending(keys.stream, DELIVERY_GROUP, entry, entry, 1)) as unknown[][])
        : [];
      const where = [
        `schedule ${(await redis.zscore(keys.schedule, id)) ?? 'no'}`,
        `scheduled body ${(await redis.hexists(keys.scheduledMessages, id)) ? 'yes' : 'no'}`,
        `stream index ${entry ?? 'no'}`,
        ...(entry
          ? [
              `stream entry ${(await redis.xrange(keys.stream, entry, entry)).length ? 'yes' : 'no'}`,
              `pending ${pending[0] ? `to ${String(pending[0][1])}, idle ${String(pending[0][2])} ms, ${String(pending[0][3])} deliveries` : 'no'}`,
            ]
          : []),
        `dead letter ${deadLetters.some((d) => d.includes(id)) ? 'yes' : 'no'}`,
      ];
      lines.push(`  redis: ${where.join(', ')}`);
      const events = await new Client({
        baseUrl: p.url,
        token: options.token,
        retry: false,
        enableTelemetry: false,
      })
        .logs({ filter: { messageId: id } })
        .then(
          (answer) =>
            answer.logs
              .map(
                (e) =>
                  `${at(e.time)} ${e.state}${e.error ? ` (${e.error})` : ''}${e.nextDeliveryTime ? ` next ${at(e.nextDeliveryTime)}` : ''}`,
              )
              .reverse()
              .join('; ') || 'none',
          (err: unknown) => `unreadable (${String(err)})`,
        );
      lines.push(`  events: ${events}`);
    }
    const until = Math.max(p.ackedAt, p.notBefore) + FAULTS_AFTER_MS;
    const near = options.faults.filter(
      (f) => startedAt + f.at >= p.ackedAt - FAULTS_BEFORE_MS && startedAt + f.at <= until,
    );
    lines.push(
      `  faults around it: ${near.map((f) => `${f.kind} ${f.target} +${(f.at / 1000).toFixed(1)} s`).join('; ') || 'none'}`,
    );
  }
  return lines;
}

/**
 * The lines where Redis said it wrote the append-only file late, from the log files under the
 * soak's state dir (each restart appends to its file), with their time as +s from the start: a
 * SIGKILL soon after one may lose writes Redis acknowledged (appendfsync everysec's window).
 */
export async function redisLateAofLines(stateDir: string, startedAt: number): Promise<string[]> {
  // A log past its bound was rotated: its older lines are in redis.log.1 (local/log-file.ts).
  const files = (await fsp.readdir(stateDir, { recursive: true })).filter((f) => /redis\.log(\.1)?$/.test(f));
  const lines: string[] = [];
  for (const file of files)
    for (const line of (await fsp.readFile(path.join(stateDir, file), 'utf8')).split('\n'))
      if (AOF_LATE_LINE.test(line)) {
        // "<pid>:M 28 Nov 2026 14:58:01.123 * ..." in the machine's local time.
        const time = Date.parse(line.match(/:\w (\d+ \w+ \d+ [\d:.]+)/)?.[1] ?? '');
        lines.push(Number.isNaN(time) ? line : `+${((time - startedAt) / 1000).toFixed(1)} s ${line}`);
      }
  return lines;
}

/**
 * The fields of INFO persistence that tell whether a SIGKILL now loses answered writes: bytes
 * answered but not yet written to the file (aof_buffer_length; a write postponed behind a running
 * fsync keeps them there up to 2 s), fsyncs running (aof_pending_bio_fsync) and the writes postponed
 * so far by this process (aof_delayed_fsync).
 */
export function aofStateOf(info: string): string {
  const field = (name: string): string => info.match(new RegExp(`^${name}:(\\d+)`, 'm'))?.[1] ?? '?';
  return `aof_buffer_length ${field('aof_buffer_length')}, aof_pending_bio_fsync ${field('aof_pending_bio_fsync')}, aof_delayed_fsync ${field('aof_delayed_fsync')}`;
}
