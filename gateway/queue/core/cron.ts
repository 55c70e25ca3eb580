import { CronExpressionParser } from 'cron-parser';
import { InvalidRequestError } from './errors.js';

/** A parsed Upstash-Cron value: five fields, in UTC unless it starts with `CRON_TZ=<zone>`. */
export interface CronSchedule {
  /** The value as given, which GET /v2/schedules answers. */
  text: string;
  fields: string;
  timeZone: string;
}

const TZ_PREFIX = /^CRON_TZ=(\S+)\s+(.*)$/s;
/** cron-parser's random `H`; QStash has no such field value. THU is not one (no word boundary). */
const RANDOM_FIELD = /\bH\b/;

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The first tick strictly after `afterMs`, epoch ms. */
export function nextTick(schedule: Pick<CronSchedule, 'fields' | 'timeZone'>, afterMs: number): number {
  return CronExpressionParser.parse(schedule.fields, {
    currentDate: new Date(afterMs),
    tz: schedule.timeZone,
  })
    .next()
    .getTime();
}

/**
 * Parses Upstash-Cron as QStash reads it: standard five-field cron (minute resolution; names such
 * as MON or JAN, `L` and `#` allowed), optionally prefixed with `CRON_TZ=<IANA zone>`. Six fields
 * (seconds), macros (`@daily`) and cron-parser's random `H` are refused. Throws a 400 naming
 * Upstash-Cron.
 */
export function parseCron(text: string): CronSchedule {
  const trimmed = text.trim();
  const zoned = TZ_PREFIX.exec(trimmed);
  const timeZone = zoned ? zoned[1]! : 'UTC';
  const fields = (zoned ? zoned[2]! : trimmed).trim().split(/\s+/);
  if (zoned && !isTimeZone(timeZone))
    throw new InvalidRequestError(`Upstash-Cron: CRON_TZ=${timeZone} is not a known time zone`);
  if (fields.length !== 5 || fields[0] === '')
    throw new InvalidRequestError(
      `Upstash-Cron ${JSON.stringify(text)} must have five fields (minute hour day-of-month month day-of-week)`,
    );
  if (fields.some((field) => field.startsWith('@') || RANDOM_FIELD.test(field)))
    throw new InvalidRequestError(
      `Upstash-Cron ${JSON.stringify(text)} is not a cron expression QStash accepts`,
    );
  const schedule = { text: trimmed, fields: fields.join(' '), timeZone };
  try {
    nextTick(schedule, Date.now());
  } catch (err) {
    throw new InvalidRequestError(`Upstash-Cron ${JSON.stringify(text)}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return schedule;
}
