/** What the phases of bench/queue-flows.ts share: the binding's key prefix and the rounds. */
import { queueKeys } from '../../gateway/queue/core/keys.js';

export const KEY_PREFIX = '{bench}:';
/** Each phase's rounds (QUEUE_FLOWS_BENCH_ROUNDS, default 3): medians with the spread (min-max). */
export const ROUNDS = Number(process.env.QUEUE_FLOWS_BENCH_ROUNDS ?? '3');
export const keys = queueKeys(KEY_PREFIX);
