import { createHash } from 'node:crypto';
import { InvalidRequestError } from './errors.js';

/**
 * Upstash-Redact-Fields: what the messages, DLQ and events APIs must not show of a message. The
 * SDK sends `body`, `header` and `header[Name]` (the docs write `headers`); a redacted value
 * appears as QStash shows it, `REDACTED:<SHA-256 hex of the value>`, so it can be checked against
 * a known value without being revealed. Deliveries always carry the real values.
 */
export interface RedactFields {
  body?: true;
  /** Every header, or these (lower-case) names. */
  headers?: true | string[];
}

const HEADER_ITEM = /^headers?\[([^\]]+)\]$/i;

export function parseRedactFields(value: string | undefined): RedactFields | undefined {
  if (value === undefined) return undefined;
  const fields: RedactFields = {};
  for (const raw of value.split(',')) {
    const item = raw.trim();
    if (item === '') continue;
    const lower = item.toLowerCase();
    const named = HEADER_ITEM.exec(item);
    if (lower === 'body') fields.body = true;
    else if (lower === 'header' || lower === 'headers') fields.headers = true;
    else if (named) {
      if (fields.headers !== true)
        fields.headers = [...(fields.headers ?? []), named[1]!.trim().toLowerCase()];
    } else {
      throw new InvalidRequestError(
        `Upstash-Redact-Fields: ${JSON.stringify(item)} is not body, header or header[Name]`,
      );
    }
  }
  return fields.body || fields.headers ? fields : undefined;
}

export function redacted(value: string | Buffer): string {
  return `REDACTED:${createHash('sha256').update(value).digest('hex')}`;
}

/** The header lists an answer shows: each redacted value replaced. */
export function redactHeaderLists(
  headers: Record<string, string[]>,
  fields: RedactFields | undefined,
): Record<string, string[]> {
  const names = fields?.headers;
  if (names === undefined) return headers;
  return Object.fromEntries(
    Object.entries(headers).map(([name, values]) => [
      name,
      names === true || names.includes(name.toLowerCase()) ? values.map(redacted) : values,
    ]),
  );
}
