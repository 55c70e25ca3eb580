import { QuotaExceededError } from '../../../../gateway/queue/core/errors.js';
import { COUNT_QUOTAS } from '../../../../gateway/queue/core/quotas.js';
import { quotaExceededIn } from '../../../../gateway/queue/scripts/quota-exceeded.js';

/** ioredis rejects with the script's error reply as the message, as it does for `QUOTA maxQueues 4`. */
const reply = (message: string) => new Error(message);

describe("the scripts' quota reply (QUOTA <quota> <limit>)", () => {
  it('when a script refuses over a count quota, then the reply becomes the 412 naming that quota, its limit and its spec field', () => {
    const cases: [string, string][] = [
      [
        'QUOTA maxQueues 4',
        'queue limit reached: the binding has its most queues (4, QueueBinding spec.limits.maxQueues); delete one first',
      ],
      [
        'QUOTA maxSchedules 20',
        'schedule limit reached: the binding has its most active schedules (20, QueueBinding spec.limits.maxSchedules); pause or delete one first',
      ],
      [
        'QUOTA maxUrlGroups 2',
        'url group limit reached: the binding has its most url groups (2, QueueBinding spec.limits.maxUrlGroups); delete one first',
      ],
      [
        'QUOTA maxUrlGroupEndpoints 100',
        'endpoint limit reached: a url group holds at most 100 endpoints (QueueBinding spec.limits.maxUrlGroupEndpoints)',
      ],
    ];
    expect(cases.map(([text]) => text.split(' ')[1])).toEqual([...COUNT_QUOTAS]);
    for (const [text, message] of cases) {
      const err = quotaExceededIn(reply(text));
      expect(err).toBeInstanceOf(QuotaExceededError);
      expect(err?.status).toBe(412);
      expect(err?.message).toBe(message);
    }
  });

  it('when a failure is anything else, then it is not taken for a quota refusal', () => {
    for (const other of [
      reply('NOSCRIPT No matching script'),
      reply('QUOTA maxParallelism 100'),
      reply('QUOTA maxQueues'),
      reply('ERR user_script:1: QUOTA maxQueues 4 in a message'),
      reply('QUEUE_LIMIT'),
      'QUOTA maxQueues 4',
      undefined,
    ])
      expect(quotaExceededIn(other)).toBeUndefined();
  });
});
