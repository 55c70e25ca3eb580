import { Ajv, type JSONSchemaType } from 'ajv';
import type { ApiRoute } from './api-router.js';
import type { QueueTarget } from '../core/binding-registry.js';
import { validateDestination } from './publish/destination.js';
import { DestinationRefusedError, InvalidRequestError, ResourceNotFoundError } from '../core/errors.js';
import { sendJson } from './json-response.js';
import { quotasOf } from '../core/quotas.js';
import { readBody } from './read-body.js';
import { storeCall } from './store-call.js';
import type { AddressPolicy } from '../core/address-policy.js';
import { validateResourceName } from '../core/resource-name.js';
import { slashedNameRoute } from './slashed-name-route.js';
import { MAX_ENDPOINT_NAME_LENGTH, type UrlGroupEndpoint } from '../core/url-group.js';
import type { UrlGroupStore } from '../stores/url-group-store.js';
const MAX_ENDPOINTS_BODY_BYTES = 1_048_576;

interface EndpointsBody {
  endpoints: { name?: string; url?: string }[];
}

const endpointsSchema: JSONSchemaType<EndpointsBody> = {
  type: 'object',
  properties: {
    endpoints: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        properties: {
          name: { type: 'string', nullable: true, maxLength: MAX_ENDPOINT_NAME_LENGTH },
          url: { type: 'string', nullable: true },
        },
        additionalProperties: false,
      },
    },
  },
  required: ['endpoints'],
  additionalProperties: false,
};
const validateEndpointsBody = new Ajv({ allErrors: false, strict: true }).compile(endpointsSchema);

function parseEndpointsBody(raw: Buffer): EndpointsBody {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new InvalidRequestError('the body is not valid JSON');
  }
  if (!validateEndpointsBody(parsed)) {
    const error = validateEndpointsBody.errors?.[0];
    const where = error?.instancePath
      ? error.instancePath.replace(/^\//, '').replace(/\//g, '.')
      : 'the body';
    throw new InvalidRequestError(`${where} ${error?.message ?? 'is not valid'}`);
  }
  return parsed;
}

/** Each endpoint's URL passes the SSRF policy now, and again at every connect (guarded agents). */
function toEndpoints(body: EndpointsBody, policy: AddressPolicy): UrlGroupEndpoint[] {
  return body.endpoints.map((endpoint, i) => {
    const url = endpoint.url;
    if (url === undefined || url === '') throw new InvalidRequestError(`endpoints.${i}.url is missing`);
    try {
      validateDestination(url, policy);
    } catch (err) {
      if (err instanceof InvalidRequestError || err instanceof DestinationRefusedError)
        throw new InvalidRequestError(`endpoints.${i}.url: ${err.message}`, { cause: err });
      throw err;
    }
    return endpoint.name ? { name: endpoint.name, url } : { url };
  });
}

/**
 * QStash's URL group API (`client.urlGroups.*`; the paths still say "topics"):
 *   POST   /v2/topics/{name}/endpoints   add endpoints, creating the group (200)
 *   DELETE /v2/topics/{name}/endpoints   remove endpoints by url or name; none left deletes the group
 *   GET    /v2/topics                    every group
 *   GET    /v2/topics/{name}             one group, 404 when missing
 *   DELETE /v2/topics/{name}             delete it (200 also when missing, as QStash answers)
 */
export function urlGroupRoutes(options: {
  storeOf: (target: QueueTarget) => UrlGroupStore;
  policy: AddressPolicy;
}): ApiRoute[] {
  const { storeOf, policy } = options;
  return [
    {
      path: 'topics',
      methods: {
        GET: async ({ res, target }) =>
          sendJson(res, 200, await storeCall('list the url groups', () => storeOf(target).list())),
      },
    },
    {
      path: 'topics/:name',
      methods: {
        GET: async ({ res, target, params }) => {
          const name = validateResourceName(params.name, 'url group name');
          const group = await storeCall('read the url group', () => storeOf(target).get(name));
          if (!group) throw new ResourceNotFoundError(`url group ${name} not found`);
          sendJson(res, 200, group);
        },
        DELETE: async ({ res, target, params }) => {
          const name = validateResourceName(params.name, 'url group name');
          // 200 also for a group that does not exist, as QStash answers (the Python SDK's tests expect it).
          await storeCall('delete the url group', () => storeOf(target).delete(name));
          res.writeHead(200).end();
        },
      },
    },
    {
      path: 'topics/:name/endpoints',
      methods: {
        POST: async ({ req, res, target, params }) => {
          const name = validateResourceName(params.name, 'url group name');
          const endpoints = toEndpoints(
            parseEndpointsBody(await readBody(req, MAX_ENDPOINTS_BODY_BYTES)),
            policy,
          );
          const quotas = quotasOf(target);
          await storeCall('add the endpoints', () =>
            storeOf(target).addEndpoints(name, endpoints, {
              maxEndpoints: quotas.maxUrlGroupEndpoints,
              maxGroups: quotas.maxUrlGroups,
            }),
          );
          res.writeHead(200).end();
        },
        DELETE: async ({ req, res, target, params }) => {
          const name = validateResourceName(params.name, 'url group name');
          const body = parseEndpointsBody(await readBody(req, MAX_ENDPOINTS_BODY_BYTES));
          body.endpoints.forEach((endpoint, i) => {
            if (!endpoint.url && !endpoint.name)
              throw new InvalidRequestError(`endpoints.${i} needs a url or a name`);
          });
          const left = await storeCall('remove the endpoints', () =>
            storeOf(target).removeEndpoints(name, body.endpoints),
          );
          if (left === undefined) throw new ResourceNotFoundError(`url group ${name} not found`);
          res.writeHead(200).end();
        },
      },
    },
    slashedNameRoute('topics', 'url group name', { GET: [], POST: ['endpoints'], DELETE: ['endpoints'] }),
  ];
}
