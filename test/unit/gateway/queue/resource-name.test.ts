import { InvalidRequestError } from '../../../../gateway/queue/core/errors.js';
import { isResourceName, validateResourceName } from '../../../../gateway/queue/core/resource-name.js';

describe('queue, URL group and schedule names', () => {
  test.each(['orders', 'a', 'Q_1.v-2', 'x'.repeat(128)])(
    'when the name is %j, then it is accepted',
    (name) => {
      expect(isResourceName(name)).toBe(true);
      expect(validateResourceName(name, 'queueName')).toBe(name);
    },
  );

  test.each([
    ['', /^queueName is missing$/],
    [undefined, /^queueName is missing$/],
    [42, /^queueName is missing$/],
    ['x'.repeat(129), /^queueName is longer than 128 characters$/],
    ['https://example.com/x', /^queueName "https:\/\/example.com\/x" may contain only letters, digits/],
    ['a b', /^queueName "a b" may contain only letters, digits/],
    ['a:b', /may contain only/],
  ])('when the name is %j, then the 400 names the field', (name, message) => {
    expect(() => validateResourceName(name, 'queueName')).toThrow(InvalidRequestError);
    expect(() => validateResourceName(name, 'queueName')).toThrow(message);
    if (typeof name === 'string') expect(isResourceName(name)).toBe(false);
  });
});
