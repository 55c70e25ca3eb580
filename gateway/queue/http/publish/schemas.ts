import { Ajv, type ErrorObject, type JSONSchemaType } from 'ajv';

/**
 * One item of a /v2/batch request, in either of the two forms clients send: the SDK's
 * `{destination, headers, body}` (body a string) or the short `{url, body}` (body any JSON value).
 */
export interface BatchItemInput {
  destination?: string;
  url?: string;
  headers?: Record<string, string>;
  body?: unknown;
  /**
   * The SDK's queue name (`batch([{queueName}])`): the item is enqueued there. `null` is no queue:
   * the Python SDK sends `"queue": null` for an item without one.
   */
  queue?: string | null;
}

const batchItemSchema: JSONSchemaType<BatchItemInput> = {
  type: 'object',
  properties: {
    destination: { type: 'string', nullable: true },
    url: { type: 'string', nullable: true },
    headers: { type: 'object', nullable: true, required: [], additionalProperties: { type: 'string' } },
    body: {} as JSONSchemaType<BatchItemInput>['properties']['body'],
    queue: { type: 'string', nullable: true },
  },
  anyOf: [{ required: ['destination'] }, { required: ['url'] }],
  additionalProperties: false,
};

const batchSchema: JSONSchemaType<BatchItemInput[]> = { type: 'array', items: batchItemSchema };

// strictRequired is off because anyOf names properties defined one level up, which is valid JSON Schema.
const ajv = new Ajv({ allErrors: false, strict: true, strictRequired: false });

export const validateBatch = ajv.compile(batchSchema);

/** The first validation error, in words a client can act on. */
export function describeSchemaError(errors: ErrorObject[] | null | undefined): string {
  // A failed anyOf also reports each branch's `required`; the anyOf itself says it better.
  const error = errors?.find((e) => e.keyword === 'anyOf') ?? errors?.[0];
  if (!error) return 'the batch is not valid';
  const where =
    error.instancePath === ''
      ? 'the batch'
      : `batch item ${error.instancePath.replace(/^\//, '').replace(/\//g, '.')}`;
  if (error.keyword === 'anyOf') return `${where} must have a destination or a url`;
  if (error.keyword === 'additionalProperties') {
    return `${where} has an unknown field ${JSON.stringify((error.params as { additionalProperty: string }).additionalProperty)}`;
  }
  return `${where} ${error.message ?? 'is not valid'}`;
}
