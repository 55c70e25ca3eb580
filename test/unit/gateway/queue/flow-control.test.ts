import { InvalidRequestError } from '../../../../gateway/queue/core/errors.js';
import {
  flowControlFields,
  parseFlowControlHeaders,
  parseFlowControlValue,
  toFlowControlInfo,
  validateFlowControlKey,
} from '../../../../gateway/queue/core/flow-control.js';

describe('flow-control headers', () => {
  it('when the SDK writes parallelism, rate and a period, then all three are taken, the period in seconds', () => {
    expect(parseFlowControlHeaders('tenant-42', 'parallelism=3, rate=10, period=1m')).toEqual({
      key: 'tenant-42',
      parallelism: 3,
      rate: 10,
      periodSeconds: 60,
    });
  });

  it("when the docs' spelling is used (capitalised names, no spaces, bare seconds), then it reads the same", () => {
    expect(parseFlowControlValue('Rate=10,Parallelism=5')).toEqual({ rate: 10, parallelism: 5 });
    expect(parseFlowControlValue('rate=2,period=30')).toEqual({ rate: 2, periodSeconds: 30 });
    expect(parseFlowControlValue(' parallelism=1 , ')).toEqual({ parallelism: 1 });
  });

  it('when neither header is sent, then the message has no flow control', () => {
    expect(parseFlowControlHeaders(undefined, undefined)).toBeUndefined();
  });

  it.each([
    ['k', 'parallelism=0', /Upstash-Flow-Control-Value parallelism "0" is not a whole number of at least 1/],
    ['k', 'parallelism=-1', /parallelism "-1" is not a whole number/],
    ['k', 'parallelism=1.5', /parallelism "1.5" is not a whole number/],
    ['k', 'rate=abc', /Upstash-Flow-Control-Value rate "abc" is not a whole number/],
    ['k', 'rate=5, period=0s', /Upstash-Flow-Control-Value period "0s" must be a whole number of seconds/],
    ['k', 'rate=5, period=500ms', /period "500ms" must be a whole number of seconds, at least 1s/],
    ['k', 'rate=5, period=soon', /period "soon" is not a duration/],
    ['k', 'period=10s', /sets neither parallelism nor rate/],
    ['k', 'rate=5, period=10s, parallelism', /"parallelism" is not parallelism=N, rate=N or period/],
    ['k', 'burst=4', /"burst=4" is not parallelism=N, rate=N or period/],
    ['k', 'rate=1, rate=2', /gives rate twice/],
    ['k', 'garbage', /"garbage" is not parallelism=N/],
    ['k', '', /Upstash-Flow-Control-Key is set without Upstash-Flow-Control-Value/],
    [undefined, 'rate=1', /Upstash-Flow-Control-Value is set without Upstash-Flow-Control-Key/],
    [' ', 'rate=1', /Upstash-Flow-Control-Key is missing/],
    ['a/b', 'rate=1', /Upstash-Flow-Control-Key "a\/b" may contain only letters, digits/],
    ['has space', 'rate=1', /may contain only letters, digits/],
    ['x'.repeat(257), 'rate=1', /Upstash-Flow-Control-Key is longer than 256 characters/],
  ])('when the key is %j and the value %j, then it is a 400 naming the field', (key, value, message) => {
    const parse = () => parseFlowControlHeaders(key, value);
    expect(parse).toThrow(InvalidRequestError);
    expect(parse).toThrow(message);
  });

  it('when a key comes from a path, then the 400 names the path parameter', () => {
    expect(() => validateFlowControlKey('a%2Fb', 'flow-control key')).toThrow(
      /flow-control key "a%2Fb" may contain only/,
    );
    expect(validateFlowControlKey('user:42@eu-1.api_v2')).toBe('user:42@eu-1.api_v2');
  });

  it("when a key's record is answered, then the SDK's FlowControlInfo fields are filled, the window start in seconds", () => {
    const record = {
      createdAt: 1,
      parallelism: 2,
      rate: 10,
      period: 60,
      paused: true,
      pinnedParallelism: false,
      pinnedRate: true,
      rateCount: 4,
      ratePeriodStart: 1_700_000_000_999,
    };
    expect(toFlowControlInfo('k', record, { waiting: 7, active: 2 })).toEqual({
      flowControlKey: 'k',
      waitListSize: 7,
      parallelismMax: 2,
      parallelismCount: 2,
      rateMax: 10,
      rateCount: 4,
      ratePeriod: 60,
      ratePeriodStart: 1_700_000_000,
      isPaused: true,
      isPinnedParallelism: false,
      isPinnedRate: true,
    });
  });

  it("when a message's answer is built, then the period defaults to QStash's 1 s, also with only a parallelism, and absent limits stay absent", () => {
    expect(flowControlFields({ key: 'k', rate: 3 })).toEqual({ flowControlKey: 'k', rate: 3, period: 1 });
    expect(flowControlFields({ key: 'k', parallelism: 2 })).toEqual({
      flowControlKey: 'k',
      parallelism: 2,
      period: 1,
    });
    expect(flowControlFields(undefined)).toEqual({});
  });
});
