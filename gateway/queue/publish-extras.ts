import { parseCallbackRequest } from './callback-headers.js';
import type { MessageRequest } from './message.js';
import type { HeaderBag, PublishLimits } from './publish-headers.js';
import type { AddressPolicy } from './ssrf/address-policy.js';

export type PublishExtras = Pick<MessageRequest, 'callback' | 'failureCallback'>;

/**
 * The publish headers that ask for more than one delivery: Upstash-Callback and
 * Upstash-Failure-Callback with their settings. Their URLs pass the same check as a destination.
 */
export function parsePublishExtras(
  headers: HeaderBag,
  limits: PublishLimits,
  policy: AddressPolicy,
): PublishExtras {
  const extras: PublishExtras = {};
  const callback = parseCallbackRequest(headers, 'callback', limits, policy);
  if (callback) extras.callback = callback;
  const failureCallback = parseCallbackRequest(headers, 'failure-callback', limits, policy);
  if (failureCallback) extras.failureCallback = failureCallback;
  return extras;
}
