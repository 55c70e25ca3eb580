import { parseCallbackRequest } from './callback-headers.js';
import { deduplicationKey, type DeduplicatedContent } from './deduplication.js';
import type { MessageRequest } from '../../core/message.js';
import type { HeaderBag, PublishLimits } from './publish-headers.js';
import type { AddressPolicy } from '../../core/address-policy.js';
import { parseWorkflowPublish } from '../../core/workflow-message.js';

export type PublishExtras = Pick<
  MessageRequest,
  'callback' | 'failureCallback' | 'deduplicationKey' | 'workflowPublish'
>;

/**
 * The publish headers that decide how often a message is delivered: Upstash-Callback and
 * Upstash-Failure-Callback with their settings (their URLs pass the same check as a destination),
 * Upstash-Deduplication-Id or Upstash-Content-Based-Deduplication over `content`, and the
 * Upstash-Workflow-* headers that make it a step of a workflow run (workflow-publish.ts).
 */
export function parsePublishExtras(
  headers: HeaderBag,
  content: DeduplicatedContent,
  limits: PublishLimits,
  policy: AddressPolicy,
): PublishExtras {
  const extras: PublishExtras = {};
  const callback = parseCallbackRequest(headers, 'callback', limits, policy);
  if (callback) extras.callback = callback;
  const failureCallback = parseCallbackRequest(headers, 'failure-callback', limits, policy);
  if (failureCallback) extras.failureCallback = failureCallback;
  const key = deduplicationKey(headers, content);
  if (key !== undefined) extras.deduplicationKey = key;
  const workflowPublish = parseWorkflowPublish(headers);
  if (workflowPublish !== undefined) extras.workflowPublish = workflowPublish;
  return extras;
}
