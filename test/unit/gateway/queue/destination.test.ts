import { DestinationRefusedError, InvalidRequestError } from '../../../../gateway/queue/core/errors.js';
import { validateDestination } from '../../../../gateway/queue/http/publish/destination.js';
import { destinationFromUrl } from '../../../../gateway/queue-url/queue-path.js';
import { compileAddressPolicy } from '../../../../gateway/queue/core/address-policy.js';

const strict = compileAddressPolicy([]);

describe('destinations', () => {
  it('when the SDK puts a destination in the publish path, then it is taken whole: its own // and query string', () => {
    expect(destinationFromUrl('/ns/db/v2/publish/https://a.example/hooks/x?y=1&z=2')).toBe(
      'https://a.example/hooks/x?y=1&z=2',
    );
    expect(destinationFromUrl('/v2/publish/v2/publish/https://a.example/')).toBe('https://a.example/');
    expect(destinationFromUrl('/ns/db/v2/publish/')).toBe('');
    expect(destinationFromUrl('/ns/db/v2/publish')).toBe('');
  });

  it('when a destination is a public http(s) URL, then it is accepted', () => {
    expect(() => validateDestination('https://a.example/hook?x=1', strict)).not.toThrow();
    expect(() => validateDestination('http://93.184.216.34:8080/', strict)).not.toThrow();
  });

  it('when a destination passed under one policy, then another policy still judges it, and it passes its own again', () => {
    const local = compileAddressPolicy(['127.0.0.0/8']);
    expect(() => validateDestination('http://127.0.0.1:3001/', local)).not.toThrow();
    expect(() => validateDestination('http://127.0.0.1:3001/', strict)).toThrow(DestinationRefusedError);
    expect(() => validateDestination('http://127.0.0.1:3001/', local)).not.toThrow();
  });

  it('when a destination is missing or unparsable, then it is bad input', () => {
    expect(() => validateDestination('', strict)).toThrow(InvalidRequestError);
    expect(() => validateDestination('not%20a%20url', strict)).toThrow(InvalidRequestError);
    expect(() => validateDestination('https://', strict)).toThrow(InvalidRequestError);
  });

  it('when a destination is not http or https, then it is refused', () => {
    for (const destination of [
      'ftp://a.example/file',
      'file:///etc/passwd',
      'gopher://a.example',
      'javascript:alert(1)',
    ]) {
      expect(() => validateDestination(destination, strict)).toThrow(DestinationRefusedError);
    }
  });

  it('when a destination is a private, loopback or link-local IP in any spelling, then it is refused by default', () => {
    const refused = [
      'http://127.0.0.1/',
      'http://10.0.0.1/',
      'http://172.16.0.1/',
      'http://192.168.1.1/',
      'http://100.64.0.1/',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://2130706433/',
      'http://0x7f000001/',
      'http://0177.0.0.1/',
      'http://127.1/',
      'http://0.0.0.0/',
      'http://[fd00::1]/',
      'http://[fe80::1]/',
    ];
    for (const destination of refused)
      expect(() => validateDestination(destination, strict)).toThrow(DestinationRefusedError);
  });

  it('when loopback is allowlisted, then loopback destinations are accepted and other private ones still refused', () => {
    const local = compileAddressPolicy(['127.0.0.0/8', '::1/128']);
    expect(() => validateDestination('http://127.0.0.1:3000/', local)).not.toThrow();
    expect(() => validateDestination('http://[::1]:3000/', local)).not.toThrow();
    expect(() => validateDestination('http://[::ffff:127.0.0.1]:3000/', local)).not.toThrow();
    expect(() => validateDestination('http://10.0.0.1/', local)).toThrow(DestinationRefusedError);
  });
});
