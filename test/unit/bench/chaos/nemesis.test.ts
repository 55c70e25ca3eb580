import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { KubeConfig } from '@kubernetes/client-node';
import {
  backoffOf,
  FAULT_KINDS,
  faultKindSchedule,
  injectFault,
  type NemesisContext,
} from '../../../../bench/chaos/nemesis.js';
import { seededRandom } from '../../../../bench/lib/seeded-random.js';
import { faultsHit } from '../../../../bench/chaos/report.js';
import type { PlatformProcess } from '../../../../local/platform.js';

describe('the chaos nemesis schedule', () => {
  it('when 10 faults are scheduled, then every kind is among them and none comes a third time', () => {
    for (const seed of [1, 29, 2929, 123456]) {
      const schedule = faultKindSchedule(seededRandom(seed), 10);
      expect(schedule).toHaveLength(10);
      expect(new Set(schedule)).toEqual(new Set(FAULT_KINDS));
      for (const kind of FAULT_KINDS)
        expect(schedule.filter((k) => k === kind).length).toBeLessThanOrEqual(2);
    }
  });

  it('when the same seed is given, then the same schedule comes back, and another seed gives another', () => {
    expect(faultKindSchedule(seededRandom(29), 24)).toEqual(faultKindSchedule(seededRandom(29), 24));
    expect(faultKindSchedule(seededRandom(29), 24)).not.toEqual(faultKindSchedule(seededRandom(30), 24));
  });
});

describe("the kubelet's restart back-off as the nemesis reads it", () => {
  it('when a pod waits in CrashLoopBackOff, then its back-off is read from the message; any other wait is none', () => {
    expect(backoffOf('back-off 40s restarting failed container=couchdb pod=default/chaos-0-0')).toBe(40_000);
    expect(backoffOf('back-off 10s restarting failed container=couchdb pod=default/chaos-1-0')).toBe(10_000);
    expect(backoffOf(undefined)).toBe(0);
    expect(backoffOf('waiting for its claim')).toBe(0);
  });
});

describe('a fault with no target at first', () => {
  const context = (running: () => PlatformProcess[], targetWaitMs?: number): NemesisContext => ({
    kubeConfig: new KubeConfig(),
    running,
    gatewayUrls: [],
    redisAnswers: () => Promise.resolve(true),
    instancesAnswer: () => Promise.resolve(true),
    wakeInstance: () => Promise.resolve(false),
    instancePods: () => Promise.resolve([]),
    log: () => undefined,
    ...(targetWaitMs !== undefined ? { targetWaitMs } : {}),
  });

  it('when its target appears a moment later (a process between its crash and its restart), then the nemesis waits for it and hits it', async () => {
    const restarted = spawn('sleep', ['600'], { stdio: 'ignore' });
    const exited = once(restarted, 'exit');
    try {
      const appearsAt = Date.now() + 1_000;
      const fault = await injectFault(
        'kill-redis',
        context(() => (Date.now() >= appearsAt ? [{ name: 'redis-server:6379', pid: restarted.pid! }] : [])),
        seededRandom(29),
        Date.now(),
      );
      expect(fault).toMatchObject({ kind: 'kill-redis', target: 'redis-server:6379', pid: restarted.pid });
      expect(fault.recoveryMs).toBeGreaterThanOrEqual(0);
      expect(faultsHit([fault])).toEqual([fault]);
      expect((await exited)[1]).toBe('SIGKILL');
    } finally {
      restarted.kill('SIGKILL');
    }
  });

  it('when no target appears within the wait, then nothing is injected and the record is a skip: no recovery, no hit of its kind', async () => {
    const fault = await injectFault(
      'kill-redis',
      context(() => [], 300),
      seededRandom(29),
      Date.now(),
    );
    expect(fault).toMatchObject({ kind: 'kill-redis', target: 'none', pid: -1 });
    expect(fault.recoveryMs).toBeUndefined();
    expect(faultsHit([fault])).toEqual([]);
  });

  it('when no engine runs at a kill-engine, then the nemesis wakes one instance first and hits its engine', async () => {
    // A pod's engine as the nemesis finds one: a descendant of the kubelet stand-in (here this
    // process) named as the stand-in's server, listening on the pod's own loopback address.
    const podIP = '127.0.0.29';
    let engine: ChildProcess | undefined;
    const listening = `require('node:net').createServer().listen(0, '${podIP}', () => console.log('up'))`;
    const hibernated: NemesisContext = {
      ...context(() => [{ name: 'kubelet-stand-in', pid: process.pid }], 5_000),
      // Some instance does not answer (a gateway restarting): asking for every one wakes none.
      instancesAnswer: () => Promise.resolve(engine !== undefined && engine.signalCode !== null),
      wakeInstance: async () => {
        engine = spawn(process.execPath, ['-e', listening, 'pouchdb-stand-in-server'], { stdio: 'pipe' });
        await once(engine.stdout!, 'data');
        return true;
      },
      instancePods: () => Promise.resolve([{ name: 'soak-0', podIP }]),
    };
    try {
      const fault = await injectFault('kill-engine', hibernated, seededRandom(29), Date.now());
      expect(fault).toMatchObject({ kind: 'kill-engine', target: 'engine soak-0', pid: engine?.pid });
      expect(faultsHit([fault])).toEqual([fault]);
    } finally {
      engine?.kill('SIGKILL');
    }
  }, 30_000);
});
