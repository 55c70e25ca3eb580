import { adminHashSchemeFor } from '../../../../../operator/resources/couch-instance/admin-password-hash.js';
import {
  buildCouchDbConfigMap,
  serverUuidOf,
} from '../../../../../operator/resources/couch-instance/couchdb-config.js';
import { buildTestInstance, TEST_CREDENTIALS } from './fixtures.js';
import { expectGolden } from './golden.js';

describe('buildCouchDbConfigMap', () => {
  it('when built, then it matches the golden ini with single_node, uuid, vendor, bind address and the hashed admin', () => {
    const instance = buildTestInstance();
    const configMap = buildCouchDbConfigMap(instance, {
      serverUuid: serverUuidOf(instance),
      adminUsername: TEST_CREDENTIALS.username,
      adminPasswordHash: '-pbkdf2:sha256-abc,def,50000',
      hashScheme: adminHashSchemeFor('3.5.1'),
      vendorName: 'Settee',
    });
    expectGolden('configmap', configMap);
    expect(JSON.stringify(configMap)).not.toContain(TEST_CREDENTIALS.password);
    expect(JSON.stringify(configMap)).not.toContain(TEST_CREDENTIALS.cookieSecret);
  });
});
