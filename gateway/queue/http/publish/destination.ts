import { DestinationRefusedError, InvalidRequestError } from '../../core/errors.js';
import { checkAddress, isIpLiteral, type AddressPolicy } from '../../core/address-policy.js';
import { CACHED_DESTINATION_LENGTH } from '../../core/message.js';

const MAX_DESTINATION_LENGTH = 8_192;

/**
 * Destinations that passed, per policy. A publisher sends to a few destinations over and over,
 * and a batch item's URL parse and address check cost about as much as the rest of its checks.
 * Only passes are kept (a refusal is judged again each time, with its message), and only short
 * destinations, at most MAX_REMEMBERED of them, so the memory stays bounded whatever is sent.
 */
const passed = new WeakMap<AddressPolicy, Set<string>>();
const MAX_REMEMBERED = 1_000;

/**
 * Checks a destination at publish time: an absolute http(s) URL, and, when its host is an IP
 * literal (in any spelling the URL parser normalizes: 2130706433, 0x7f000001, [::ffff:7f00:1]), an
 * address the policy allows. Names are judged at connect time by the guarded lookup instead. The
 * destination is kept as given: it is what the signature's `sub` carries and the Receiver compares.
 */
export function validateDestination(destination: string, policy: AddressPolicy): void {
  const remembered = passed.get(policy);
  if (remembered?.has(destination)) return;
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
  if (destination.length > CACHED_DESTINATION_LENGTH) return;
  if (!remembered) passed.set(policy, new Set([destination]));
  else {
    if (remembered.size >= MAX_REMEMBERED) remembered.clear();
    remembered.add(destination);
  }
}
