import { InvalidQStashDurationError, parseQStashDuration } from '../../../api/qstash-duration.js';
import { InvalidRequestError } from './errors.js';

/**
 * QStash's flow control (upstash/docs qstash/features/flowcontrol): messages that share an
 * Upstash-Flow-Control-Key are started at most `parallelism` at once and at most `rate` per
 * `period`, counted across every gateway replica; over a limit they wait, they are not refused.
 */

/** What a message asks of its key: Upstash-Flow-Control-Key and Upstash-Flow-Control-Value. */
export interface FlowControl {
  key: string;
  /** Deliveries of the key in flight at once; absent = no limit. */
  parallelism?: number;
  /** Deliveries of the key started per `periodSeconds`; absent = no limit. */
  rate?: number;
  /** The rate's window, whole seconds (default 1, QStash's). */
  periodSeconds?: number;
}

/**
 * A key's state as its hash field stores it (keys.ts `flowControls`); 0 means "no limit". The
 * limits are the highest among the key's unfinished messages', or the pinned ones
 * (scripts/flow-control-limits.ts).
 */
export interface FlowControlRecord {
  createdAt: number;
  parallelism: number;
  rate: number;
  /** Seconds. */
  period: number;
  /** Unfinished messages (waiting, due, in flight) per parallelism ("0" = none); absent on keys stored before it. */
  parallelismCounts?: Record<string, number>;
  /** Unfinished messages per rate and period ("10/60": 10 per 60 s; "0" = none). */
  rateCounts?: Record<string, number>;
  /** The counts did not add up to the key's messages at the mover's last tick; at a second, they are rebuilt. */
  countsDrifted?: boolean;
  paused: boolean;
  pinnedParallelism: boolean;
  pinnedRate: boolean;
  /** Deliveries started in the current rate window. */
  rateCount: number;
  /** Epoch ms the current rate window began (0 before the first). */
  ratePeriodStart: number;
}

/** QStash's answer for a key (the SDK's FlowControlInfo). */
export interface FlowControlInfo {
  flowControlKey: string;
  waitListSize: number;
  parallelismMax: number;
  parallelismCount: number;
  rateMax: number;
  rateCount: number;
  /** Seconds. */
  ratePeriod: number;
  /** Unix time in seconds, as QStash's OpenAPI gives it (0 before the first window). */
  ratePeriodStart: number;
  isPaused: boolean;
  isPinnedParallelism: boolean;
  isPinnedRate: boolean;
}

export const DEFAULT_PERIOD_SECONDS = 1;
export const MAX_FLOW_CONTROL_KEY_LENGTH = 256;
/** No `/`, `?`, `#`, `%` or spaces: the key is a path segment of /v2/flowControl/{key} and part of Redis key names. */
const FLOW_CONTROL_KEY = /^[A-Za-z0-9._:@-]+$/;
const VALUE_NAME = 'Upstash-Flow-Control-Value';

/** Checks a flow-control key from a header or a path; the 400 names the field. */
export function validateFlowControlKey(value: unknown, field = 'Upstash-Flow-Control-Key'): string {
  if (typeof value !== 'string' || value.trim() === '') throw new InvalidRequestError(`${field} is missing`);
  const key = value.trim();
  if (key.length > MAX_FLOW_CONTROL_KEY_LENGTH)
    throw new InvalidRequestError(`${field} is longer than ${MAX_FLOW_CONTROL_KEY_LENGTH} characters`);
  if (!FLOW_CONTROL_KEY.test(key))
    throw new InvalidRequestError(
      `${field} ${JSON.stringify(key)} may contain only letters, digits, '-', '_', '.', ':' and '@'`,
    );
  return key;
}

/** A whole number of at least 1; `name` is what the 400 calls it. */
export function parsePositiveInteger(text: string, name: string): number {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed) || !Number.isSafeInteger(Number(trimmed)) || Number(trimmed) < 1)
    throw new InvalidRequestError(`${name} ${JSON.stringify(text)} is not a whole number of at least 1`);
  return Number(trimmed);
}

/** A period as QStash takes it: `10s`, `5m`, `1h`, `2d` or bare seconds; whole seconds, at least one. */
export function parsePeriodSeconds(text: string, name: string): number {
  let ms: number;
  try {
    ms = parseQStashDuration(text);
  } catch (err) {
    if (!(err instanceof InvalidQStashDurationError)) throw err;
    throw new InvalidRequestError(
      `${name} ${JSON.stringify(text)} is not a duration such as 1s, 10s, 5m or 1h`,
      {
        cause: err,
      },
    );
  }
  if (ms < 1000 || ms % 1000 !== 0)
    throw new InvalidRequestError(
      `${name} ${JSON.stringify(text)} must be a whole number of seconds, at least 1s`,
    );
  return ms / 1000;
}

/**
 * Reads `parallelism=N, rate=N, period=10s` as the SDK writes it, and the docs' `Rate=10,Parallelism=5`:
 * names in any case, commas with or without spaces. A value that sets nothing, names something
 * else, repeats a name, or gives a period without a rate (it would limit nothing) is a 400.
 */
export function parseFlowControlValue(value: string): Omit<FlowControl, 'key'> {
  const limits: Omit<FlowControl, 'key'> = {};
  const seen = new Set<string>();
  for (const part of value.split(',')) {
    const text = part.trim();
    if (text === '') continue;
    const equals = text.indexOf('=');
    const name = (equals < 0 ? text : text.slice(0, equals)).trim().toLowerCase();
    if (equals < 0 || !['parallelism', 'rate', 'period'].includes(name))
      throw new InvalidRequestError(
        `${VALUE_NAME} ${JSON.stringify(value)}: ${JSON.stringify(text)} is not parallelism=N, rate=N or period=<duration>`,
      );
    if (seen.has(name)) throw new InvalidRequestError(`${VALUE_NAME} gives ${name} twice`);
    seen.add(name);
    const amount = text.slice(equals + 1);
    if (name === 'parallelism')
      limits.parallelism = parsePositiveInteger(amount, `${VALUE_NAME} parallelism`);
    else if (name === 'rate') limits.rate = parsePositiveInteger(amount, `${VALUE_NAME} rate`);
    else limits.periodSeconds = parsePeriodSeconds(amount, `${VALUE_NAME} period`);
  }
  if (limits.parallelism === undefined && limits.rate === undefined)
    throw new InvalidRequestError(`${VALUE_NAME} ${JSON.stringify(value)} sets neither parallelism nor rate`);
  if (limits.periodSeconds !== undefined && limits.rate === undefined)
    throw new InvalidRequestError(
      `${VALUE_NAME} gives a period without a rate: the period is the rate's window`,
    );
  return limits;
}

/** The message's flow control from its headers (lower-case names), or undefined when it has none. */
export function parseFlowControlHeaders(
  key: string | undefined,
  value: string | undefined,
): FlowControl | undefined {
  if (key === undefined && value === undefined) return undefined;
  if (key === undefined)
    throw new InvalidRequestError(`${VALUE_NAME} is set without Upstash-Flow-Control-Key`);
  const flowKey = validateFlowControlKey(key);
  if (value === undefined || value.trim() === '')
    throw new InvalidRequestError(
      `Upstash-Flow-Control-Key is set without ${VALUE_NAME} (parallelism=N, rate=N, period=<duration>)`,
    );
  return { key: flowKey, ...parseFlowControlValue(value) };
}

export function toFlowControlInfo(
  key: string,
  record: FlowControlRecord,
  counts: { waiting: number; active: number },
): FlowControlInfo {
  return {
    flowControlKey: key,
    waitListSize: counts.waiting,
    parallelismMax: record.parallelism,
    parallelismCount: counts.active,
    rateMax: record.rate,
    rateCount: record.rateCount,
    ratePeriod: record.period,
    ratePeriodStart: Math.floor(record.ratePeriodStart / 1000),
    isPaused: record.paused,
    isPinnedParallelism: record.pinnedParallelism,
    isPinnedRate: record.pinnedRate,
  };
}

/** A message's limits as the scripts count them: 0 = no limit, period in seconds. */
export function flowLimitsJson(flowControl: FlowControl): string {
  return JSON.stringify({
    parallelism: flowControl.parallelism ?? 0,
    rate: flowControl.rate ?? 0,
    period: flowControl.periodSeconds ?? DEFAULT_PERIOD_SECONDS,
  });
}

/** The flow-control fields of QStash's message answers (messages, DLQ): key, limits, period in seconds. */
export function flowControlFields(flowControl: FlowControl | undefined): {
  flowControlKey?: string;
  parallelism?: number;
  rate?: number;
  period?: number;
} {
  if (flowControl === undefined) return {};
  const period = flowControl.periodSeconds ?? DEFAULT_PERIOD_SECONDS;
  return {
    flowControlKey: flowControl.key,
    ...(flowControl.parallelism !== undefined && { parallelism: flowControl.parallelism }),
    ...(flowControl.rate !== undefined && { rate: flowControl.rate }),
    // Also without a rate: QStash answers its default period (and the Python SDK reads it).
    period,
  };
}
