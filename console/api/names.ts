import { BadInputError } from '../http/errors.js';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A namespace from the URL: a DNS label, so it can go into an API path as it is. */
export function checkNamespace(value: unknown): string {
  if (typeof value !== 'string' || value.length > 63 || !DNS_LABEL.test(value))
    throw new BadInputError('namespace must be a DNS label (lower-case letters, digits and "-")', {
      namespace: 'not a valid namespace name',
    });
  return value;
}

/** An object name from the URL or a form (CouchInstance names are DNS labels too: they name Services). */
export function checkObjectName(value: unknown, field = 'name'): string {
  if (typeof value !== 'string' || value.length > 63 || !DNS_LABEL.test(value))
    throw new BadInputError(
      `${field} must be at most 63 lower-case letters, digits and "-", starting and ending with a letter or digit`,
      {
        [field]: 'lower-case letters, digits and "-", at most 63, starting and ending with a letter or digit',
      },
    );
  return value;
}
