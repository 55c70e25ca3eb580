import { SETTEE_API_VERSION } from '../../../../../api/contract.js';
import type { CouchInstance, CouchInstanceSpec } from '../../../../../api/couch-instance.js';
import { DEFAULT_INSTANCE_RESOURCES } from '../../../../../api/free-envelope.js';
import type { InstanceCredentials } from '../../../../../operator/resources/couch-instance/admin-secret.js';
import type { InstanceDefaults } from '../../../../../operator/resources/couch-instance/resolved-spec.js';

/** A stored CouchInstance as the informer cache holds it. */
export function buildTestInstance(spec: CouchInstanceSpec = {}, name = 'orders'): CouchInstance {
  return {
    apiVersion: SETTEE_API_VERSION,
    kind: 'CouchInstance',
    metadata: {
      name,
      namespace: 'tenant-a',
      uid: '6f1c0a53-9d7e-4a51-8f0c-2b7e5d1c9a10',
      generation: 1,
      resourceVersion: '100',
    },
    spec,
  };
}

export const TEST_CREDENTIALS: InstanceCredentials = {
  username: 'admin-0a1b2c',
  password: 'pa55-word_with-url-safe-chars',
  cookieSecret: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
};

export const TEST_DEFAULTS: InstanceDefaults = {
  version: '3.5.1',
  storageSize: '1Gi',
  resources: {
    requests: { ...DEFAULT_INSTANCE_RESOURCES.requests },
    limits: { ...DEFAULT_INSTANCE_RESOURCES.limits },
  },
};
