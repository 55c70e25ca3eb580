import { InvalidRequestError } from './errors.js';

/** The longest queue name, URL group name or schedule id. */
export const MAX_RESOURCE_NAME_LENGTH = 128;

/**
 * QStash's rule for URL group names ("alphanumeric, hyphen, underscore and periods"), which Settee
 * also applies to queue names and schedule ids: none can hold `/` or `:`, so a name in a path such
 * as /v2/enqueue/{queue}/{url} never reads as a URL, and a URL is never a name.
 */
const RESOURCE_NAME = /^[A-Za-z0-9._-]+$/;

export function isResourceName(value: string): boolean {
  return value.length > 0 && value.length <= MAX_RESOURCE_NAME_LENGTH && RESOURCE_NAME.test(value);
}

/** Checks a name from a path, a header or a body; the 400 names `field`. */
export function validateResourceName(value: unknown, field: string): string {
  if (typeof value === 'string' && isResourceName(value)) return value;
  throw resourceNameError(value, field);
}

/** The 400 for a value that is not a resource name, saying what is wrong with it. */
export function resourceNameError(value: unknown, field: string): InvalidRequestError {
  if (typeof value !== 'string' || value === '') return new InvalidRequestError(`${field} is missing`);
  if (value.length > MAX_RESOURCE_NAME_LENGTH)
    return new InvalidRequestError(`${field} is longer than ${MAX_RESOURCE_NAME_LENGTH} characters`);
  return new InvalidRequestError(
    `${field} ${JSON.stringify(value.slice(0, 200))} may contain only letters, digits, '-', '_' and '.'`,
  );
}
