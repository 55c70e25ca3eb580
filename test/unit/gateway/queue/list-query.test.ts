import { InvalidRequestError } from '../../../../gateway/queue/core/errors.js';
import {
  labelsOf,
  matchesFilters,
  parseListQuery,
  type ListQuerySpec,
} from '../../../../gateway/queue/core/list-query.js';

const spec: ListQuerySpec = {
  filters: ['url', 'host', 'path', 'label', 'fromDate', 'toDate', 'messageId', 'responseStatus', 'state'],
  maxCount: 100,
  cursor: true,
};
const parse = (query: string, with_: ListQuerySpec = spec) =>
  parseListQuery(new URLSearchParams(query), with_);

describe('list query parameters', () => {
  it('when the SDK sends filters, count and cursor, then repeated parameters become lists', () => {
    expect(
      parse(
        'url=https://a.example/x&url=https://b.example/&label=l1&fromDate=10&toDate=20&count=5&cursor=abc',
      ),
    ).toEqual({
      filters: {
        url: ['https://a.example/x', 'https://b.example/'],
        label: ['l1'],
        fromDate: 10,
        toDate: 20,
      },
      count: 5,
      cursor: 'abc',
    });
    expect(parse('messageIds=m1&messageIds=m2&cursor=')).toEqual({ filters: { messageId: ['m1', 'm2'] } });
    expect(parse('responseStatus=500&state=DELIVERED')).toEqual({
      filters: { responseStatus: [500], state: ['DELIVERED'] },
    });
  });

  it.each([
    ['count=0', /count must be a whole number from 1 to 100/],
    ['count=101', /count must be a whole number from 1 to 100/],
    ['count=ten', /count must be a whole number/],
    ['fromDate=yesterday', /fromDate must be a whole number/],
    ['fromDate=20&toDate=10', /fromDate is after toDate/],
    ['responseStatus=42', /responseStatus must be a whole number from 100 to 599/],
    ['state=DONE', /state must be one of CREATED, ACTIVE/],
    ['colour=red', /unknown query parameter "colour"/],
    ['url=', /url must not be empty/],
    ['workflowRunId=wfr_1', /filter workflowRunId is not supported/],
  ])('when the query is %s, then it is a 400 naming the parameter', (query, message) => {
    expect(() => parse(query)).toThrow(InvalidRequestError);
    expect(() => parse(query)).toThrow(message);
  });

  it('when a route takes no count, cursor or filter, then sending one is a 400', () => {
    expect(() => parse('count=1', { filters: [] })).toThrow(/unknown query parameter "count"/);
    expect(() => parse('label=x', { filters: [] })).toThrow(/unknown query parameter "label"/);
  });

  it('when items are matched, then each filter must hold and a list matches any of its values', () => {
    const item = {
      url: 'https://a.example/hooks/1?x=1',
      labels: ['orders', 'eu'],
      time: 15,
      messageId: 'msg_1',
      responseStatus: 500,
    };
    expect(matchesFilters(item, {})).toBe(true);
    expect(matchesFilters(item, { label: ['eu', 'us'], fromDate: 15, toDate: 15 })).toBe(true);
    expect(matchesFilters(item, { host: ['a.example'], path: ['/hooks/1'] })).toBe(true);
    expect(matchesFilters(item, { responseStatus: [500, 502], messageId: ['msg_1'] })).toBe(true);
    expect(matchesFilters(item, { label: ['us'] })).toBe(false);
    expect(matchesFilters(item, { fromDate: 16 })).toBe(false);
    expect(matchesFilters(item, { url: ['https://a.example/hooks/1'] })).toBe(false);
    expect(matchesFilters(item, { state: ['DELIVERED'] })).toBe(false);
  });

  it('when a label header holds several labels, then each is one label', () => {
    expect(labelsOf('a, b,,c')).toEqual(['a', 'b', 'c']);
    expect(labelsOf(undefined)).toEqual([]);
  });
});
