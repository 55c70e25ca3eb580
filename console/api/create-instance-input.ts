import { Ajv, type ErrorObject } from 'ajv';
import { BadInputError } from '../http/errors.js';
import type { CreateInstanceInput } from './instance-view.js';
import { checkObjectName } from './names.js';

/**
 * The shape of the create form's body. Only types are checked here: what values are allowed (plan
 * rules, durations, quantities) is the API server's to say, with the CRD's own messages, which the
 * page shows next to the field. Unknown fields are refused, not dropped.
 */
const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'plan'],
  properties: {
    name: { type: 'string' },
    plan: { type: 'string' },
    idleAfter: { type: 'string', maxLength: 64 },
    keepAlive: { type: 'boolean' },
    addons: {
      type: 'object',
      additionalProperties: false,
      properties: {
        largerStorage: {
          type: 'object',
          additionalProperties: false,
          required: ['size'],
          properties: { size: { type: 'string', maxLength: 64 } },
        },
        backups: {
          type: 'object',
          additionalProperties: false,
          required: ['schedule'],
          properties: { schedule: { type: 'string', maxLength: 128 }, retain: { type: 'integer' } },
        },
        regionPinning: {
          type: 'object',
          additionalProperties: false,
          required: ['region'],
          properties: { region: { type: 'string', maxLength: 128 } },
        },
      },
    },
  },
} as const;

const validate = new Ajv({ allErrors: true }).compile<CreateInstanceInput>(schema);

function fieldOf(error: ErrorObject): string {
  const path = error.instancePath.replace(/^\//, '').replaceAll('/', '.');
  const extra = error.params as { additionalProperty?: string; missingProperty?: string };
  const leaf = extra.additionalProperty ?? extra.missingProperty;
  return [path, leaf].filter(Boolean).join('.') || 'body';
}

export function parseCreateInstanceInput(body: unknown): CreateInstanceInput {
  if (!validate(body)) {
    const fields: Record<string, string> = {};
    for (const error of validate.errors ?? []) fields[fieldOf(error)] = error.message ?? 'invalid';
    throw new BadInputError(
      `The form has fields the console cannot send: ${Object.keys(fields).join(', ')}`,
      fields,
    );
  }
  checkObjectName(body.name);
  return body;
}
