import { DestinationRefusedError, InvalidRequestError } from '../../core/errors.js';
import { checkAddress, isIpLiteral, type AddressPolicy } from '../../core/address-policy.js';

const MAX_DESTINATION_LENGTH = 8_192;

/**
 * Checks a destination at publish time: an absolute http(s) URL, and, when its host is an IP
 * literal (in any spelling the URL parser normalizes: 2130706433, 0x7f000001, [::ffff:7f00:1]), an
 * address the policy allows. Names are judged at connect time by the guarded lookup instead. The
 * destination is kept as given: it is what the signature's `sub` carries and the Receiver compares.
 */
export function validateDestination(destination: string, policy: AddressPolicy): URL {
  if (destination.length === 0) throw new InvalidRequestError('destination is missing');
  if (destination.length > MAX_DESTINATION_LENGTH) throw new InvalidRequestError('destination is too long');
  let url: URL;
  try {
    url = new URL(destination);
  } catch {
    throw new InvalidRequestError(`destination ${JSON.stringify(destination)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new DestinationRefusedError(destination, 'only http and https destinations are allowed');
  }
  if (url.hostname === '')
    throw new InvalidRequestError(`destination ${JSON.stringify(destination)} has no host`);
  if (isIpLiteral(url.hostname)) {
    const verdict = checkAddress(url.hostname, policy);
    if (!verdict.allowed) throw new DestinationRefusedError(destination, verdict.reason);
  }
  return url;
}
