import { createHash } from 'node:crypto';
import {
  redactDestination,
  redactQueueRequestUrl,
} from '../../../../gateway/queue-url/redact-destination.js';

const sha12 = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);

describe('redacting destinations for logs', () => {
  it.each([
    'https://hooks.slack.com/services/T000/B000/XXXXSECRETXXXX',
    'https://discord.com/api/webhooks/123/SECRET-token',
    'https://api.telegram.org/botSECRET:token/sendMessage',
    'https://user:SECRET@receiver.example:8443/hook?token=SECRET#SECRET',
  ])('when the destination is %s, then only its origin and a hash of the whole are kept', (destination) => {
    const logged = redactDestination(destination);
    expect(logged).toEqual({ destination: new URL(destination).origin, destinationHash: sha12(destination) });
    expect(JSON.stringify(logged)).not.toMatch(/SECRET/);
  });

  it('when two destinations share a host, then their hashes differ', () => {
    const a = redactDestination('https://hooks.example/a');
    const b = redactDestination('https://hooks.example/b');
    expect(a.destination).toBe(b.destination);
    expect(a.destinationHash).not.toBe(b.destinationHash);
  });

  it('when the destination is not a URL, then it is not echoed', () => {
    expect(redactDestination('SECRET-not-a-url').destination).toBe('<unparsable destination>');
  });
});

describe('redacting queue request URLs for the request log', () => {
  it.each([
    [
      '/queue/ns/db/v2/publish/http://user:SECRET@receiver.example:8080/SECRET?token=SECRET',
      '/queue/ns/db/v2/publish/http://receiver.example:8080',
    ],
    [
      '/QUEUE/ns/db/V2/PUBLISH/https://hooks.slack.com/services/SECRET',
      '/QUEUE/ns/db/V2/PUBLISH/https://hooks.slack.com',
    ],
    ['/queue/ns/db/v2/publish/SECRET', '/queue/ns/db/v2/publish/<unparsable destination>'],
    ['/queue/ns/db/v2/batch?token=SECRET', '/queue/ns/db/v2/batch'],
    ['/queue/ns/db/x/v2/publish/http://user:pa?ss-SECRET@host/', '/queue/ns/db/x/v2/publish/http://host/'],
    ['/queue/ns/db/v2/publish', '/queue/ns/db/v2/publish'],
  ])('when the URL is %s, then %s is logged', (url, logged) => {
    expect(redactQueueRequestUrl(url)).toBe(logged);
  });
});
