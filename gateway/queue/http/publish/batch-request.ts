import {
  DestinationRefusedError,
  InvalidRequestError,
  QuotaExceededError,
  WorkflowStepRefusedError,
} from '../../core/errors.js';
import type { MessageRequest } from '../../core/message.js';
import { parsePublishExtras } from './publish-extras.js';
import { lowerCaseHeaders, parsePublishHeaders, type PublishLimits } from './publish-headers.js';
import { describeSchemaError, validateBatch, type BatchItemInput } from './schemas.js';
import { validateDestination } from './destination.js';
import type { AddressPolicy } from '../../core/address-policy.js';
import { validateResourceName } from '../../core/resource-name.js';
import { isUrlGroupName } from '../../core/url-group.js';
import { WORKFLOW_RUN_ID_HEADER } from '../../core/workflow-message.js';

export interface BatchLimits extends PublishLimits {
  maxBatchSize: number;
  maxBodyBytes: number;
}

/** A short-form item's non-string body is sent as JSON, and labelled so unless it names a type. */
function itemBody(item: BatchItemInput, headers: Record<string, string>): Buffer {
  if (item.body === undefined || item.body === null) return Buffer.alloc(0);
  if (typeof item.body === 'string') return Buffer.from(item.body, 'utf8');
  headers['content-type'] ??= 'application/json';
  return Buffer.from(JSON.stringify(item.body), 'utf8');
}

/** The value of an item's header `name` (lower case), whatever its case; the schema is checked after. */
function itemHeader(item: unknown, name: string): unknown {
  const headers =
    typeof item === 'object' && item !== null ? (item as { headers?: unknown }).headers : undefined;
  if (typeof headers !== 'object' || headers === null) return undefined;
  const key = Object.keys(headers).find((key) => key.toLowerCase() === name);
  return key === undefined ? undefined : (headers as Record<string, unknown>)[key];
}

/** An item carrying a workflow run id: a run's trigger or step. */
function isWorkflowMessage(item: unknown): boolean {
  return itemHeader(item, WORKFLOW_RUN_ID_HEADER) !== undefined;
}

/**
 * One batch item: a message, or, when its destination is a URL group's name, the message each of
 * the group's endpoints gets (its `destination` is then the group's name until it is fanned out).
 */
export interface BatchItem {
  request: MessageRequest;
  urlGroup?: string;
}

/** A batch item that is well-formed but cannot be published: its place in the answer is `{error}`. */
export interface RefusedBatchItem {
  refused: string;
}

/**
 * Parses a whole /v2/batch body before anything is stored. As QStash does (upstash/docs
 * qstash/features/batch: "If the format of the messages are valid, the response will be an array of
 * responses for each message... If one message fails to be sent, that message will have an error
 * response, but the other messages will still be sent"), a body that is not a well-formed batch
 * (not JSON, not an array, empty, too many items, an item that breaks the schema) is refused whole,
 * while an item whose destination or headers are bad is refused alone.
 */
export function parseBatchRequest(
  raw: Buffer,
  limits: BatchLimits,
  policy: AddressPolicy,
): (BatchItem | RefusedBatchItem)[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new InvalidRequestError('the batch is not valid JSON');
  }
  if (!Array.isArray(parsed)) throw new InvalidRequestError('the batch must be a JSON array');
  if (parsed.length === 0) throw new InvalidRequestError('the batch is empty');
  const workflowBatch = parsed.some(isWorkflowMessage);
  if (parsed.length > limits.maxBatchSize) {
    const message = `the batch has ${parsed.length} messages, more than the allowed ${limits.maxBatchSize}`;
    // A workflow's parallel group is one batch of its steps (the SDK's submitParallelSteps). The
    // SDK takes a 400 there as "the run was cancelled" and stops silently; a 412 fails the run.
    // client.trigger([...]) sends its runs as one batch too.
    if (workflowBatch)
      throw new QuotaExceededError(
        `${message}: a workflow's batch (a parallel group's steps, or the runs one trigger starts) takes at most that many`,
      );
    throw new InvalidRequestError(message);
  }
  if (!validateBatch(parsed)) throw new InvalidRequestError(describeSchemaError(validateBatch.errors));
  return parsed.map((item, index) => {
    const where = `batch item ${index}`;
    const destination = item.destination ?? item.url ?? '';
    try {
      const queueName = item.queue == null ? undefined : validateResourceName(item.queue, 'queue');
      const urlGroup = isUrlGroupName(destination) ? destination : undefined;
      if (!urlGroup) validateDestination(destination, policy);
      const headers = lowerCaseHeaders(item.headers ?? {});
      const options = parsePublishHeaders(headers, limits, Date.now(), Object.keys(item.headers ?? {}));
      const body = itemBody(item, options.headers);
      const extras = parsePublishExtras(
        headers,
        { destination, headers: options.headers, body },
        limits,
        policy,
      );
      if (body.length > limits.maxBodyBytes)
        throw new InvalidRequestError(`its body is larger than ${limits.maxBodyBytes} bytes`);
      // Object.assign, not spreads followed by properties: several times cheaper on Node 20, once
      // per item of a batch (docs/queue.md, Performance).
      const request: MessageRequest = Object.assign({}, options, extras, { destination, body });
      if (queueName !== undefined) request.queueName = queueName;
      return urlGroup ? { request, urlGroup } : { request };
    } catch (err) {
      if (!(err instanceof InvalidRequestError || err instanceof DestinationRefusedError)) throw err;
      // The workflow SDK reads no item's answer in its batches: client.trigger would hand back the
      // id of a run never started, and a step (context.call's request) would wait for an answer
      // never sent. A workflow's batch is refused whole, nothing stored: a trigger's with a 400
      // that client.trigger throws naming the field; a running run's step's with a 412, since
      // the SDK takes a 400 there as "the run was cancelled" and would leave it RUN_STARTED.
      if (workflowBatch) {
        const message = `${where}: ${err.message}`;
        if (itemHeader(item, 'upstash-workflow-init') === 'true')
          throw new InvalidRequestError(message, { cause: err });
        throw new WorkflowStepRefusedError(message, { cause: err });
      }
      return { refused: `${where}: ${err.message}` };
    }
  });
}
