import { isResourceName } from './resource-name.js';

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

export const MAX_ENDPOINT_NAME_LENGTH = 128;

/** A URL is never a group name (no `:` or `/`), so a publish destination is one or the other. */
export function isUrlGroupName(value: string): boolean {
  return isResourceName(value);
}
