import { findRuleViolations } from '../../../api/couch-instance-rules.js';
import type { CouchInstanceSpec } from '../../../api/couch-instance.js';
import { DEFAULT_FREE_ENVELOPE } from '../../../api/free-envelope.js';

const violations = (spec: CouchInstanceSpec, envelope = DEFAULT_FREE_ENVELOPE) =>
  findRuleViolations(spec, envelope);

describe('the CouchInstance spec rules (TypeScript twins of the CRD CEL rules)', () => {
  it('when a free instance asks for nothing special, then no rule is broken', () => {
    expect(violations({ plan: 'free', hibernation: { idleAfter: '10s' }, storage: { size: '1Gi' } })).toEqual(
      [],
    );
  });

  it('when keepAlive is on a free instance, then "keepAlive requires plan: paid"', () => {
    expect(violations({ plan: 'free', keepAlive: true })).toEqual(['keepAlive requires plan: paid']);
    expect(violations({ keepAlive: true })).toEqual(['keepAlive requires plan: paid']);
    expect(violations({ plan: 'paid', keepAlive: true })).toEqual([]);
  });

  it('when the version is not a 3.x release, then it is rejected with a message naming 3.x', () => {
    expect(violations({ version: '2.3.1' })).toEqual([expect.stringContaining('CouchDB 3.x release')]);
    expect(violations({ version: '3' })).toHaveLength(1);
    expect(violations({ version: '3.3.3' })).toEqual([]);
  });

  it('when add-ons are set on a free instance, then each add-on is named as requiring plan: paid', () => {
    const addons = {
      largerStorage: { size: '10Gi' },
      backups: { schedule: '0 3 * * *' },
      regionPinning: { region: 'eu-west-1' },
    };
    expect(violations({ plan: 'free', addons })).toEqual([
      'addons.largerStorage requires plan: paid',
      'addons.backups requires plan: paid',
      'addons.regionPinning requires plan: paid',
    ]);
    expect(violations({ plan: 'paid', addons })).toEqual([]);
  });

  it('when storage.size is above the envelope, then it is rejected on either plan (larger volumes use addons.largerStorage)', () => {
    const message = 'storage.size above the free envelope (1Gi) needs plan: paid with addons.largerStorage';
    expect(violations({ storage: { size: '1025Mi' } })).toEqual([message]);
    expect(violations({ plan: 'paid', storage: { size: '2Gi' } })).toEqual([message]);
    expect(violations({ storage: { size: '1024Mi' } })).toEqual([]);
  });

  it('when the operator is configured with a narrower envelope, then the message names that envelope', () => {
    expect(violations({ storage: { size: '1Gi' } }, { ...DEFAULT_FREE_ENVELOPE, storage: '512Mi' })).toEqual([
      'storage.size above the free envelope (512Mi) needs plan: paid with addons.largerStorage',
    ]);
  });

  it('when idleAfter is shorter than 1s or not a duration, then it is rejected', () => {
    expect(violations({ hibernation: { idleAfter: '500ms' } })).toHaveLength(1);
    expect(violations({ hibernation: { idleAfter: '10' } })).toHaveLength(1);
    expect(violations({ hibernation: { idleAfter: '1s' } })).toEqual([]);
    expect(violations({ hibernation: { idleAfter: '1h30m' } })).toEqual([]);
  });

  it('when free resources exceed the envelope or requests exceed limits, then each is reported', () => {
    expect(violations({ resources: { limits: { cpu: '2' } } })).toEqual([
      'resources on plan: free must stay inside the free envelope (cpu 1, memory 1Gi)',
    ]);
    expect(violations({ plan: 'paid', resources: { limits: { cpu: '2' } } })).toEqual([]);
    expect(violations({ resources: { requests: { memory: '300Mi' }, limits: { memory: '200Mi' } } })).toEqual(
      ['resources.requests.memory must not exceed resources.limits.memory'],
    );
  });

  it('when a backup schedule is not a five-field cron expression, then it is rejected', () => {
    expect(violations({ plan: 'paid', addons: { backups: { schedule: 'daily' } } })).toHaveLength(1);
    expect(violations({ plan: 'paid', addons: { backups: { schedule: '@daily' } } })).toEqual([]);
  });

  it('when spec.restore names both or neither of backup and instance, or before without instance, then it is rejected', () => {
    const exactlyOne = 'restore needs exactly one of backup (a CouchBackup) or instance (its newest backup)';
    expect(violations({ restore: { backup: 'b1', instance: 'shop' } })).toEqual([exactlyOne]);
    expect(violations({ restore: {} })).toEqual([exactlyOne]);
    expect(violations({ restore: { backup: 'b1', before: '2026-01-01T00:00:00Z' } })).toEqual([
      'restore.before picks among the backups of restore.instance; set instance with it',
    ]);
    expect(violations({ restore: { backup: 'b1' } })).toEqual([]);
    expect(violations({ restore: { instance: 'shop', before: '2026-01-01T00:00:00Z' } })).toEqual([]);
  });
});
