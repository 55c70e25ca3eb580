import {
  buildClientService,
  buildHeadlessService,
} from '../../../../../operator/resources/couch-instance/services.js';
import { buildTestInstance } from './fixtures.js';
import { expectGolden } from './golden.js';

describe('buildHeadlessService and buildClientService', () => {
  it('when built, then they match the golden Services', () => {
    expectGolden('services', [
      buildHeadlessService(buildTestInstance()),
      buildClientService(buildTestInstance()),
    ]);
  });

  it('when the headless Service is built, then it publishes not-ready addresses for the gateway', () => {
    const service = buildHeadlessService(buildTestInstance());
    expect(service.metadata?.name).toBe('orders-headless');
    expect(service.spec).toMatchObject({ clusterIP: 'None', publishNotReadyAddresses: true });
    expect(service.spec?.ports).toEqual([{ name: 'http', port: 5984, targetPort: 'http', protocol: 'TCP' }]);
  });
});
