import { PassThrough } from 'node:stream';
import { CoreV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import { KubeEventRecorder } from '../../../kube/events.js';
import { createLogger, createSilentLogger } from '../../../observability/logger.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';

const namespace = useTestNamespace('events');

describe('KubeEventRecorder', () => {
  const core = () => testControlPlane().kubeConfig.makeApiClient(CoreV1Api);
  let involved: V1ConfigMap;

  beforeAll(async () => {
    const created = await core().createNamespacedConfigMap({
      namespace: namespace.name,
      body: { metadata: { name: 'subject' } },
    });
    involved = { ...created, apiVersion: 'v1', kind: 'ConfigMap' };
  });

  const eventsAbout = async () =>
    (
      await core().listNamespacedEvent({
        namespace: namespace.name,
        fieldSelector: `involvedObject.uid=${involved.metadata!.uid}`,
      })
    ).items;

  it('when an event is recorded, then an Event about the object is visible through the API', async () => {
    const recorder = new KubeEventRecorder({
      core: core(),
      component: 'settee-operator',
      instance: 'replica-a',
      logger: createSilentLogger(),
    });
    await recorder.record(involved, {
      type: 'Normal',
      reason: 'CredentialsCreated',
      message: 'admin credentials generated',
    });
    const [event, ...others] = await eventsAbout();
    expect(others).toHaveLength(0);
    expect(event).toMatchObject({
      type: 'Normal',
      reason: 'CredentialsCreated',
      message: 'admin credentials generated',
      count: 1,
      reportingComponent: 'settee-operator',
      reportingInstance: 'replica-a',
      source: { component: 'settee-operator' },
      involvedObject: {
        kind: 'ConfigMap',
        apiVersion: 'v1',
        name: 'subject',
        namespace: namespace.name,
        uid: involved.metadata!.uid,
      },
    });
  });

  it('when the same event repeats, then the one Event counts it, and a different message makes a new Event', async () => {
    const recorder = new KubeEventRecorder({
      core: core(),
      component: 'settee-operator',
      instance: 'replica-a',
      logger: createSilentLogger(),
    });
    const event = { type: 'Warning', reason: 'WakeFailed', message: 'image pull failed' } as const;
    await recorder.record(involved, event);
    await recorder.record(involved, event);
    await recorder.record(involved, event);
    await recorder.record(involved, { ...event, message: 'out of capacity' });
    const warnings = (await eventsAbout()).filter((e) => e.reason === 'WakeFailed');
    expect(warnings.map((e) => [e.message, e.count]).sort()).toEqual([
      ['image pull failed', 3],
      ['out of capacity', 1],
    ]);
  });

  it('when one object keeps failing in new words, then its Events of that reason stop at the burst, and other reasons and objects still get theirs', async () => {
    let now = new Date('2030-01-01T00:00:00Z');
    const recorder = new KubeEventRecorder({
      core: core(),
      component: 'settee-operator',
      instance: 'replica-a',
      logger: createSilentLogger(),
      spamPolicy: { burst: 5, refillIntervalMs: 300_000, maxKeys: 100 },
      now: () => now,
    });
    const other = await core().createNamespacedConfigMap({
      namespace: namespace.name,
      body: { metadata: { name: 'other-subject' } },
    });
    const failure = (n: number) =>
      ({ type: 'Warning', reason: 'ReconcileFailed', message: `attempt ${n}` }) as const;
    for (let n = 1; n <= 8; n += 1) await recorder.record(involved, failure(n));
    await recorder.record(involved, { type: 'Normal', reason: 'Started', message: 'CouchDB is ready' });
    await recorder.record({ ...other, apiVersion: 'v1', kind: 'ConfigMap' }, failure(1));
    const failed = () => eventsAbout().then((events) => events.filter((e) => e.reason === 'ReconcileFailed'));
    expect((await failed()).map((e) => e.message).sort()).toEqual([1, 2, 3, 4, 5].map((n) => `attempt ${n}`));
    expect((await eventsAbout()).some((e) => e.reason === 'Started')).toBe(true);
    const aboutOther = await core().listNamespacedEvent({
      namespace: namespace.name,
      fieldSelector: `involvedObject.uid=${other.metadata!.uid}`,
    });
    expect(aboutOther.items.map((e) => e.reason)).toEqual(['ReconcileFailed']);
    // Five minutes on, one more.
    now = new Date(now.getTime() + 300_000);
    await recorder.record(involved, failure(9));
    await recorder.record(involved, failure(10));
    expect((await failed()).map((e) => e.message)).toContain('attempt 9');
    expect((await failed()).map((e) => e.message)).not.toContain('attempt 10');
  });

  it('when the Event cannot be written, then record resolves anyway and logs a warning', async () => {
    const lines: string[] = [];
    const stream = new PassThrough();
    stream.on('data', (chunk: Buffer) => lines.push(chunk.toString()));
    const recorder = new KubeEventRecorder({
      core: core(),
      component: 'settee-operator',
      instance: 'replica-a',
      logger: createLogger({ level: 'warn', component: 'test', stream }),
    });
    const nowhere = { ...involved, metadata: { ...involved.metadata, namespace: 'no-such-namespace-here' } };
    await expect(
      recorder.record(nowhere, { type: 'Normal', reason: 'Hibernated', message: 'idle' }),
    ).resolves.toBeUndefined();
    const logged = JSON.parse(lines.join('').trim().split('\n').pop()!);
    expect(logged).toMatchObject({
      level: 'warn',
      message: 'could not write an Event',
      reason: 'Hibernated',
      component: 'test',
    });
  });
});
