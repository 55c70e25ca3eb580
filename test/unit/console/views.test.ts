import type { CouchInstance } from '../../../api/couch-instance.js';
import { renderDotenv } from '../../../console/api/binding-view.js';
import { parseCreateInstanceInput } from '../../../console/api/create-instance-input.js';
import { buildCouchInstance, buildInstanceRow } from '../../../console/api/instance-view.js';
import { showsQueueBlock } from '../../../console/web/src/lib/queue-block.js';
import { safeHttpUrl } from '../../../console/web/src/lib/safe-url.js';
import { buildSnippets } from '../../../console/web/src/lib/snippets.js';

const instance = (overrides: Partial<CouchInstance>): CouchInstance => ({
  apiVersion: 'settee.dev/v1alpha1',
  kind: 'CouchInstance',
  metadata: { name: 'db' },
  spec: {},
  ...overrides,
});

describe('the instance row', () => {
  it('when an instance has no plan, size or status, then it reads free, the free envelope and Unknown', () => {
    expect(buildInstanceRow(instance({}))).toMatchObject({
      name: 'db',
      plan: 'free',
      size: '1Gi',
      phase: 'Unknown',
      endpoint: null,
      lastColdStart: null,
    });
  });

  it('when larger storage is an add-on, then its size is the size; the last cold start is when Active last turned True', () => {
    const row = buildInstanceRow(
      instance({
        spec: {
          plan: 'paid',
          storage: { size: '1Gi' },
          addons: { largerStorage: { size: '20Gi' } },
          keepAlive: true,
        },
        status: {
          phase: 'Running',
          conditions: [
            {
              type: 'Active',
              status: 'True',
              reason: 'Running',
              message: '',
              lastTransitionTime: '2026-11-24T05:00:00Z',
            },
          ],
        },
      }),
    );
    expect(row).toMatchObject({
      size: '20Gi',
      keepAlive: true,
      phase: 'Running',
      lastColdStart: '2026-11-24T05:00:00Z',
    });
    const hibernated = buildInstanceRow(
      instance({
        status: {
          phase: 'Hibernated',
          conditions: [
            { type: 'Active', status: 'False', reason: 'Hibernated', message: '', lastTransitionTime: 'x' },
          ],
        },
      }),
    );
    expect(hibernated.lastColdStart).toBeNull();
  });

  it('when the form asks for an instance, then only the fields given are in the spec', () => {
    expect(buildCouchInstance('ns', { name: 'a', plan: 'free' }).spec).toEqual({ plan: 'free' });
    expect(
      buildCouchInstance('ns', { name: 'a', plan: 'paid', idleAfter: '30s', keepAlive: true, addons: {} })
        .spec,
    ).toEqual({
      plan: 'paid',
      keepAlive: true,
      hibernation: { idleAfter: '30s' },
    });
  });

  it('when the form body has an unknown field, a wrong type or a bad name, then it is refused naming the field', () => {
    expect(() => parseCreateInstanceInput({ name: 'a', plan: 'free', replicas: 2 })).toThrow(
      expect.objectContaining({ fields: { replicas: expect.any(String) } }),
    );
    expect(() => parseCreateInstanceInput({ name: 'a', plan: 'free', keepAlive: 'yes' })).toThrow(
      expect.objectContaining({ fields: { keepAlive: expect.any(String) } }),
    );
    expect(() => parseCreateInstanceInput({ name: '../x', plan: 'free' })).toThrow(
      expect.objectContaining({ fields: { name: expect.any(String) } }),
    );
    expect(parseCreateInstanceInput({ name: 'ok-1', plan: 'free' })).toEqual({ name: 'ok-1', plan: 'free' });
  });
});

describe('the .env download', () => {
  it('when values hold quotes, backslashes or newlines, then each stays on its own line, escaped, under both names', () => {
    const text = renderDotenv(
      {
        VQUEUE_URL: 'http://127.0.0.1:8080/queue/ns/q',
        VQUEUE_TOKEN: 'pa"ss\\word\nINJECTED=1',
        VQUEUE_QSTASH_TOKEN: 'qs"tash\nINJECTED=2',
        VQUEUE_CURRENT_SIGNING_KEY: 'sig_current',
        VQUEUE_NEXT_SIGNING_KEY: '',
      },
      { namespace: 'ns', name: 'q' },
    );
    const lines = text.trim().split('\n');
    expect(lines.filter((line) => line.startsWith('INJECTED'))).toEqual([]);
    expect(lines).toContain('VQUEUE_TOKEN="pa\\"ss\\\\word\\nINJECTED=1"');
    expect(lines).toContain('VQUEUE_QSTASH_TOKEN="qs\\"tash\\nINJECTED=2"');
    // QSTASH_TOKEN is the QStash-format token, as QStash issues it (the workflow SDK's webhooks need it).
    expect(lines).toContain('QSTASH_TOKEN="qs\\"tash\\nINJECTED=2"');
    expect(lines.filter((line) => line.startsWith('QSTASH_TOKEN='))).toHaveLength(1);
    expect(lines).toContain('QSTASH_URL="http://127.0.0.1:8080/queue/ns/q"');
    expect(lines).toContain('QSTASH_NEXT_SIGNING_KEY=""');
  });
});

describe('what the page shows', () => {
  it('when the database is a Redis or Valkey QueueBinding, then the queue block shows; for a CouchInstance it never does', () => {
    expect(showsQueueBlock({ kind: 'queue-binding', engine: 'redis' })).toBe(true);
    expect(showsQueueBlock({ kind: 'queue-binding', engine: 'valkey' })).toBe(true);
    expect(showsQueueBlock({ kind: 'queue-binding', engine: 'memcached' })).toBe(false);
    expect(showsQueueBlock({ kind: 'couch-instance' })).toBe(false);
  });

  it('when an endpoint is not http(s), then it is no link', () => {
    expect(safeHttpUrl('https://db.ns.example.com')).toBe('https://db.ns.example.com/');
    expect(safeHttpUrl('javascript:alert(1)')).toBeUndefined();
    expect(safeHttpUrl('data:text/html,x')).toBeUndefined();
    expect(safeHttpUrl('not a url')).toBeUndefined();
    expect(safeHttpUrl(null)).toBeUndefined();
  });

  it('when a password has shell or JSON metacharacters, then the snippets quote it so it stays one argument', () => {
    const snippets = buildSnippets('http://h/db/ns/x', {
      username: 'admin',
      password: `it's "$(rm)"`,
      url: 'http://admin:p@h/db/ns/x',
    });
    const curl = snippets.find((s) => s.id === 'curl')?.code ?? '';
    expect(curl).toBe(`curl -u 'admin:it'\\''s "$(rm)"' 'http://h/db/ns/x/_all_dbs'`);
    const replicator = JSON.parse(snippets.find((s) => s.id === 'replicator')?.code ?? '{}') as {
      source: { auth: { basic: { password: string } } };
    };
    expect(replicator.source.auth.basic.password).toBe(`it's "$(rm)"`);
  });
});
