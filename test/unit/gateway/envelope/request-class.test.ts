import {
  isBulkDocs,
  isDeletionOnlyBulkDocs,
  classifyRequest,
  createdDatabase,
  mayGrowData,
} from '../../../../gateway/envelope/request-class.js';

describe('classifyRequest', () => {
  it.each([
    ['GET', '/'],
    ['HEAD', '/db/doc'],
    ['GET', '/db/doc?revs=true'],
    ['GET', '/db/_all_docs?include_docs=true'],
    ['POST', '/db/_all_docs'],
    ['POST', '/db/_all_docs/queries'],
    ['POST', '/db/_bulk_get?revs=true'],
    ['POST', '/db/_changes?filter=_selector'],
    ['POST', '/db/_revs_diff'],
    ['POST', '/_session'],
    ['POST', '/db/_ensure_full_commit'],
    ['GET', '/db/_index'],
  ])('when %s %s, then it is a read', (method, path) => {
    expect(classifyRequest(method, path)).toBe('read');
  });

  it.each([
    ['POST', '/db/_find'],
    ['POST', '/db/_find/'],
    ['POST', '/db/_explain'],
    ['GET', '/db/_design/app/_view/by_name?key=%22a%22'],
    ['POST', '/db/_design/app/_view/by_name'],
    ['POST', '/db/_design/app/_view/by_name/queries'],
  ])('when %s %s, then it is a query', (method, path) => {
    expect(classifyRequest(method, path)).toBe('query');
  });

  it.each([
    ['PUT', '/db'],
    ['PUT', '/db/doc'],
    ['POST', '/db'],
    ['DELETE', '/db/doc?rev=1-a'],
    ['COPY', '/db/doc'],
    ['POST', '/db/_bulk_docs'],
    ['POST', '/_replicate'],
    ['POST', '/db/_compact'],
    ['POST', '/db/_index'],
    ['PUT', '/db/_design/app'],
    // A segment that only starts like a reading endpoint is a document.
    ['PUT', '/db/_all_docsx'],
    ['POST', '/db/doc?_find'],
  ])('when %s %s, then it is a write', (method, path) => {
    expect(classifyRequest(method, path)).toBe('write');
  });
});

describe('mayGrowData', () => {
  it.each([
    ['PUT', '/db/doc', true],
    ['PUT', '/db/doc/attachment.png?rev=1-a', true],
    ['POST', '/db/_bulk_docs', true],
    ['PUT', '/newdb', true],
    ['POST', '/_replicate', true],
    ['PUT', '/_replicator/job', true],
    ['PUT', '/db/_local/checkpoint', true],
    ['COPY', '/db/doc', true],
    ['DELETE', '/db/doc?rev=1-a', false],
    ['DELETE', '/db/doc/attachment.png?rev=1-a', false],
    ['DELETE', '/db', false],
    ['POST', '/db/_compact', false],
    ['POST', '/db/_compact/app', false],
    ['POST', '/db/_view_cleanup', false],
    ['POST', '/db/_purge', false],
    ['GET', '/db/doc', false],
    ['POST', '/db/_find', false],
    ['POST', '/_session', false],
  ])('when %s %s, then it %s', (method, path, grows) => {
    expect(mayGrowData(method, path)).toBe(grows);
  });
});

describe('createdDatabase', () => {
  it.each([
    ['PUT', '/db', 'db'],
    ['PUT', '/db/', 'db'],
    ['PUT', '/a%2Fb?q=8', 'a%2Fb'],
    ['PUT', '/db/doc', undefined],
    ['PUT', '/_users', undefined],
    ['PUT', '/', undefined],
    ['POST', '/db', undefined],
    ['DELETE', '/db', undefined],
  ])('when %s %s, then the database created is %s', (method, path, db) => {
    expect(createdDatabase(method, path)).toBe(db);
  });
});

describe('isBulkDocs and isDeletionOnlyBulkDocs', () => {
  it('when the path is a database’s _bulk_docs, then it is one, whatever the query; other paths are not', () => {
    expect(isBulkDocs('POST', '/db/_bulk_docs')).toBe(true);
    expect(isBulkDocs('POST', '/db/_bulk_docs?new_edits=false')).toBe(true);
    expect(isBulkDocs('GET', '/db/_bulk_docs')).toBe(false);
    expect(isBulkDocs('POST', '/db/_bulk_get')).toBe(false);
    expect(isBulkDocs('POST', '/db/doc?x=/_bulk_docs')).toBe(false);
  });

  it('when every document is a bare tombstone, then the body only deletes; a body, an attachment, a live document or bad JSON make it not', () => {
    const body = (value: unknown) => Buffer.from(JSON.stringify(value));
    expect(isDeletionOnlyBulkDocs(body({ docs: [{ _id: 'a', _rev: '1-x', _deleted: true }] }))).toBe(true);
    expect(
      isDeletionOnlyBulkDocs(
        body({
          docs: [{ _id: 'a', _rev: '2-y', _deleted: true, _revisions: { start: 2, ids: ['y', 'x'] } }],
        }),
      ),
    ).toBe(true);
    expect(isDeletionOnlyBulkDocs(body({ docs: [{ _id: 'a', _deleted: true, n: 1 }] }))).toBe(false);
    expect(isDeletionOnlyBulkDocs(body({ docs: [{ _id: 'a', _deleted: true, _attachments: {} }] }))).toBe(
      false,
    );
    expect(isDeletionOnlyBulkDocs(body({ docs: [{ _id: 'a', _deleted: true }, { _id: 'b' }] }))).toBe(false);
    expect(isDeletionOnlyBulkDocs(body({ docs: [{ _id: 'a', _deleted: 'yes' }] }))).toBe(false);
    expect(isDeletionOnlyBulkDocs(body({ docs: [] }))).toBe(false);
    expect(isDeletionOnlyBulkDocs(body([{ _deleted: true }]))).toBe(false);
    expect(isDeletionOnlyBulkDocs(Buffer.from('{"docs": [{"_deleted": tru'))).toBe(false);
  });
});
