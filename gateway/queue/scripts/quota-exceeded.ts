import type { QuotaExceededError } from '../core/errors.js';
import { COUNT_QUOTAS, quotaExceeded, type CountQuota } from '../core/quotas.js';

/**
 * How every script refuses a change over one of the binding's count quotas (quotas.ts): it returns
 * `quota_exceeded('<quota>', limit)`, the error reply `QUOTA <quota> <limit>`, and LuaScript turns
 * that reply into a QuotaExceededError (quotaExceededIn), so no store maps codes of its own. An
 * error reply rather than a return value, because no answer of any script (a count, a list of
 * answers) can be taken for it, and it names which quota, so one reader serves every script.
 * Return it before the script's first write: an error reply does not undo what came before it.
 */
export const QUOTA_EXCEEDED_LUA = `
local function quota_exceeded(quota, limit)
  return redis.error_reply('QUOTA ' .. quota .. ' ' .. limit)
end
`;

const QUOTA_REPLY = new RegExp(`^QUOTA (${COUNT_QUOTAS.join('|')}) (\\d+)$`);

/** The QuotaExceededError a script's failure is when it is the quota reply; undefined for any other. */
export function quotaExceededIn(err: unknown): QuotaExceededError | undefined {
  if (!(err instanceof Error)) return undefined;
  const reply = QUOTA_REPLY.exec(err.message);
  return reply ? quotaExceeded(reply[1] as CountQuota, Number(reply[2])) : undefined;
}
