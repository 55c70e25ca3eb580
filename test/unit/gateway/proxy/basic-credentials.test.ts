import { isUndecodableBasicCredential } from '../../../../gateway/proxy/basic-credentials.js';

describe('isUndecodableBasicCredential', () => {
  it('when a Basic value is not padded base64, then it is undecodable', () => {
    for (const header of ['Basic !!!', 'Basic YWRtaW4', 'Basic YW=RtaW4=', 'Basic YWRt/a-4=', 'Basic a==='])
      expect([header, isUndecodableBasicCredential(header)]).toEqual([header, true]);
  });

  it('when the header is absent, not Basic, or base64 (with a colon or not), then it is left to CouchDB', () => {
    for (const header of [
      undefined,
      'Bearer x',
      'basic !!!',
      'Basic',
      'Basic ',
      `Basic ${Buffer.from('admin:pw').toString('base64')}`,
      `Basic ${Buffer.from('admin').toString('base64')}`,
      'Basic YWRt aW46cHc=',
    ])
      expect([header, isUndecodableBasicCredential(header)]).toEqual([header, false]);
  });
});
