import { InvalidRequestError } from '../errors.js';

/** An endpoint of a URL group, as QStash answers it. */
export interface UrlGroupEndpoint {
  name?: string;
  url: string;
}

/** A URL group (QStash's "topic"), as GET /v2/topics answers it. */
export interface UrlGroup {
  name: string;
  createdAt: number;
  updatedAt: number;
  endpoints: UrlGroupEndpoint[];
}

export const MAX_URL_GROUP_NAME_LENGTH = 128;
export const MAX_ENDPOINT_NAME_LENGTH = 128;

/** QStash: "alphanumeric, hyphen, underscore and periods". A URL is never one (no `:` or `/`). */
const URL_GROUP_NAME = /^[A-Za-z0-9._-]+$/;

export function isUrlGroupName(value: string): boolean {
  return value.length <= MAX_URL_GROUP_NAME_LENGTH && URL_GROUP_NAME.test(value);
}

/** Checks a group name from a path or a body; the 400 names the field. */
export function validateUrlGroupName(value: string, field = 'url group name'): string {
  if (isUrlGroupName(value)) return value;
  if (value.length > MAX_URL_GROUP_NAME_LENGTH)
    throw new InvalidRequestError(`${field} is longer than ${MAX_URL_GROUP_NAME_LENGTH} characters`);
  throw new InvalidRequestError(
    `${field} ${JSON.stringify(value)} may contain only letters, digits, '-', '_' and '.'`,
  );
}
