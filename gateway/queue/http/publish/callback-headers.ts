import { validateDestination } from './destination.js';
import { DestinationRefusedError, InvalidRequestError } from '../../core/errors.js';
import type { CallbackRequest } from '../../core/message.js';
import { parseFlowControlHeaders } from '../../core/flow-control.js';
import {
  forwardedHeaders,
  parseMethod,
  parseRetries,
  parseRetryDelay,
  parseTimeout,
  single,
  type HeaderBag,
  type PublishLimits,
} from './publish-headers.js';
import type { AddressPolicy } from '../../core/address-policy.js';

/**
 * Upstash-Callback and Upstash-Failure-Callback with their own settings, as QStash names them:
 * `<prefix>-Method`, `-Retries`, `-Retry-Delay`, `-Timeout`, `-Flow-Control-Key`/`-Value` and
 * `-Forward-<X>` configure the
 * callback message as the unprefixed headers configure the message. The Workflow SDK's
 * `<prefix>-Workflow-*` and `<prefix>-Feature-Set` make the callback a delivery of a workflow run
 * (context.call's answer, a failureFunction's call): they are delivered on it as
 * `Upstash-Workflow-*` and `Upstash-Feature-Set`, as QStash sets them. Any other `<prefix>-*`
 * header (QStash's `-Delay`) is refused with a 400 rather than ignored, and so is a setting
 * without its callback URL.
 */

export type CallbackKind = 'callback' | 'failure-callback';

const HEADER_NAMES: Record<CallbackKind, string> = {
  callback: 'Upstash-Callback',
  'failure-callback': 'Upstash-Failure-Callback',
};
const SETTINGS = new Map([
  ['method', 'Method'],
  ['retries', 'Retries'],
  ['retry-delay', 'Retry-Delay'],
  ['timeout', 'Timeout'],
  ['flow-control-key', 'Flow-Control-Key'],
  ['flow-control-value', 'Flow-Control-Value'],
]);

function isWorkflowSetting(setting: string): boolean {
  return setting.startsWith('workflow-') || setting === 'feature-set';
}

/** `<prefix>-Workflow-X` and `<prefix>-Feature-Set` as the callback's `upstash-workflow-x`, `upstash-feature-set`. */
function workflowHeaders(headers: HeaderBag, prefix: string): Record<string, string> {
  const delivered: Record<string, string> = {};
  for (const name of Object.keys(headers)) {
    const setting = name.slice(prefix.length);
    const value = single(headers, name);
    if (name.startsWith(prefix) && isWorkflowSetting(setting) && value !== undefined)
      delivered[`upstash-${setting}`] = value;
  }
  return delivered;
}

/** Flow control's 400s name the callback's own headers (Upstash-Callback-Flow-Control-Key). */
function parseCallbackFlowControl(key: string | undefined, value: string | undefined, display: string) {
  try {
    return parseFlowControlHeaders(key, value);
  } catch (err) {
    if (!(err instanceof InvalidRequestError)) throw err;
    throw new InvalidRequestError(err.message.replace(/Upstash-Flow-Control/g, `${display}-Flow-Control`), {
      cause: err,
    });
  }
}

function checkSettingsKnown(headers: HeaderBag, prefix: string, displayPrefix: string, url: unknown): void {
  for (const name of Object.keys(headers)) {
    if (!name.startsWith(prefix) || headers[name] === undefined) continue;
    const setting = name.slice(prefix.length);
    if (!SETTINGS.has(setting) && !setting.startsWith('forward-') && !isWorkflowSetting(setting))
      throw new InvalidRequestError(
        `${name} is not supported (only ${displayPrefix}-Method, -Retries, -Retry-Delay, -Timeout, -Flow-Control-Key, -Flow-Control-Value, -Forward-*, -Workflow-* and -Feature-Set)`,
      );
    if (url === undefined) throw new InvalidRequestError(`${name} is set without ${displayPrefix}`);
  }
}

/** The callback of `kind` a publish asks for, or undefined. `headers` have lower-case names. */
export function parseCallbackRequest(
  headers: HeaderBag,
  kind: CallbackKind,
  limits: PublishLimits,
  policy: AddressPolicy,
): CallbackRequest | undefined {
  const display = HEADER_NAMES[kind];
  const prefix = `upstash-${kind}-`;
  const url = single(headers, `upstash-${kind}`);
  checkSettingsKnown(headers, prefix, display, url);
  if (url === undefined) return undefined;
  try {
    validateDestination(url, policy);
  } catch (err) {
    if (err instanceof InvalidRequestError || err instanceof DestinationRefusedError)
      throw new InvalidRequestError(`${display}: ${err.message}`, { cause: err });
    throw err;
  }
  const setting = (name: string): [string | undefined, string] => [
    single(headers, `${prefix}${name}`),
    `${display}-${SETTINGS.get(name)}`,
  ];
  const request: CallbackRequest = {
    url,
    method: parseMethod(...setting('method')),
    headers: { ...forwardedHeaders(headers, `${prefix}forward-`), ...workflowHeaders(headers, prefix) },
    retries: parseRetries(setting('retries')[0], limits, setting('retries')[1]),
  };
  const retryDelay = parseRetryDelay(...setting('retry-delay'));
  if (retryDelay !== undefined) request.retryDelay = retryDelay;
  const timeoutMs = parseTimeout(setting('timeout')[0], limits, setting('timeout')[1]);
  if (timeoutMs !== undefined) request.timeoutMs = timeoutMs;
  // The Workflow SDK sends a run's flow control for its failure callback too (headers.ts).
  const flowControl = parseCallbackFlowControl(
    setting('flow-control-key')[0],
    setting('flow-control-value')[0],
    display,
  );
  if (flowControl !== undefined) request.flowControl = flowControl;
  return request;
}
