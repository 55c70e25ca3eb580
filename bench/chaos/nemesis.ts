import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { CoordinationV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { PlatformProcess } from '../../local/platform.js';
import { isProcessAlive } from '../../local/process.js';
import { cpuSeconds } from '../lib/process-usage.js';
import type { Random } from '../lib/seeded-random.js';

/** The faults the soak injects, each with the probe that says the platform recovered from it. */
export const FAULT_KINDS = [
  'kill-gateway',
  'pause-gateway',
  'kill-operator-leader',
  'kill-kubelet-stand-in',
  'kill-engine',
  'kill-redis',
  'kill-kube-apiserver',
  'kill-etcd',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultRecord {
  kind: FaultKind;
  target: string;
  pid: number;
  /** ms since the soak started */
  at: number;
  /**
   * From the fault (the SIGCONT for a pause) to its probe passing; undefined: not within the
   * bound, or no fault at all (target 'none': nothing to hit within the target wait).
   */
  recoveryMs?: number;
  /**
   * kill-engine: the restart back-off the kubelet applied to the crashed pod (CrashLoopBackOff's
   * 10 s doubling while a pod keeps crashing within 10 minutes, as a real kubelet's), part of
   * recoveryMs; 0 for a pod's first crash, restarted at once.
   */
  restartBackoffMs?: number;
  /** kill-redis: Redis's append-only file state just before the kill (redisAofState). */
  aofState?: string;
}

/** A soak instance's pod, as the nemesis sees it. */
export interface InstancePod {
  name: string;
  podIP: string;
  /** The container's waiting message, e.g. "back-off 40s restarting failed container=...". */
  waitingMessage?: string;
}

export interface NemesisContext {
  kubeConfig: KubeConfig;
  running(): PlatformProcess[];
  gatewayUrls: string[];
  /** Answers once the queue's database takes a write again. */
  redisAnswers(): Promise<boolean>;
  /**
   * Redis's append-only file state just before a kill-redis (INFO persistence): writes it has
   * answered but not yet written (an everysec write postponed behind a slow fsync) die with it.
   */
  redisAofState?(): Promise<string>;
  /** Answers once an instance's engine serves through the gateway again. */
  instancesAnswer(): Promise<boolean>;
  /** Wakes one of the instances the soak drives (through any gateway); true once one answered. */
  wakeInstance(): Promise<boolean>;
  /** The pods of the instances the soak drives (and instancesAnswer watches). */
  instancePods(): Promise<InstancePod[]>;
  log(message: string): void;
  /** How long a fault waits for a target to hit (default TARGET_WAIT_MS). */
  targetWaitMs?: number;
}

/** A gateway paused longer than its queue consumer lease (5 s) and its request timeouts' patience. */
export const PAUSE_MS = 8_000;
const RECOVERY_BOUND_MS = 90_000;
const PROBE_INTERVAL_MS = 200;
/**
 * How long a fault waits for its target: a process between a crash and its restart, a Lease
 * holder unknown while the API server restarts, engines all hibernated (woken by a request) are
 * there again within seconds, so a fault is skipped only when its target stays away this long.
 */
export const TARGET_WAIT_MS = 30_000;
const TARGET_POLL_MS = 500;

/**
 * The kinds of `count` faults in seeded rounds of every kind once, each round shuffled: a short
 * soak of 10 faults hits all 8 kinds, which independent draws would leave to chance.
 */
export function faultKindSchedule(random: Random, count: number): FaultKind[] {
  const schedule: FaultKind[] = [];
  while (schedule.length < count) {
    const round = [...FAULT_KINDS];
    for (let i = round.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [round[i], round[j]] = [round[j] as FaultKind, round[i] as FaultKind];
    }
    schedule.push(...round);
  }
  return schedule.slice(0, count);
}

/** A fault's target, the probe that says the platform recovered from it, and its back-off reader. */
interface Aim {
  target: PlatformProcess | undefined;
  probe: () => Promise<boolean>;
  restartBackoffMs?: () => number;
}

/**
 * Injects one fault of `kind` and waits (bounded) until its probe passes. With no target within
 * the target wait (TARGET_WAIT_MS) nothing is injected: the record's target is 'none', with no
 * recovery, and it is no hit of its kind (faultsHit in report.ts).
 */
export async function injectFault(
  kind: FaultKind,
  context: NemesisContext,
  random: Random,
  startedAt: number,
): Promise<FaultRecord> {
  const waitUntil = Date.now() + (context.targetWaitMs ?? TARGET_WAIT_MS);
  let aim = await aimAt(kind, context, random);
  while (!aim.target && Date.now() < waitUntil) {
    aim.restartBackoffMs?.();
    await sleep(TARGET_POLL_MS);
    aim = await aimAt(kind, context, random);
  }
  const { target, probe, restartBackoffMs } = aim;
  const at = Date.now() - startedAt;
  if (!target) {
    context.log(`${kind}: no process to hit within ${context.targetWaitMs ?? TARGET_WAIT_MS} ms (skipped)`);
    return { kind, target: 'none', pid: -1, at };
  }
  let faultEnd = Date.now();
  let aofState: string | undefined;
  try {
    if (kind === 'pause-gateway') {
      process.kill(target.pid, 'SIGSTOP');
      await sleep(PAUSE_MS);
      process.kill(target.pid, 'SIGCONT');
      faultEnd = Date.now();
    } else {
      if (kind === 'kill-redis') aofState = await context.redisAofState?.().catch(() => undefined);
      process.kill(target.pid, 'SIGKILL');
    }
  } catch {
    // Exited between the pick and the signal.
    context.log(`${kind}: ${target.name} (pid ${target.pid}) was gone already (skipped)`);
    return { kind, target: 'none', pid: -1, at };
  }
  context.log(
    `${kind}: ${target.name} (pid ${target.pid}) at +${(at / 1000).toFixed(1)} s${aofState ? ` (${aofState})` : ''}`,
  );
  const deadline = faultEnd + RECOVERY_BOUND_MS;
  // A killed process is gone before its probe can pass: give its supervisor a moment to notice.
  await sleep(100);
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) {
      const recoveryMs = Date.now() - faultEnd;
      const backoff = restartBackoffMs?.();
      // Each fault's own time, not only the slowest of its kind: to tell a slow one's cause from the
      // log. A restarted process's CPU time so far tells a start starved of CPU (recovery far
      // longer than that) from one that waited on something else.
      const restarted = context
        .running()
        .find((p) => p.name === target.name && p.pid !== target.pid && isProcessAlive(p.pid));
      const cpuMs = restarted ? processCpuMs(restarted.pid) : undefined;
      context.log(
        `${kind}: ${target.name} recovered in ${(recoveryMs / 1000).toFixed(1)} s${backoff ? ` (restart back-off ${(backoff / 1000).toFixed(1)} s)` : ''}${cpuMs !== undefined ? `, its restart used ${(cpuMs / 1000).toFixed(2)} s of CPU` : ''}, load ${os.loadavg()[0]?.toFixed(1)}`,
      );
      return {
        kind,
        target: target.name,
        pid: target.pid,
        at,
        recoveryMs,
        ...(backoff !== undefined ? { restartBackoffMs: backoff } : {}),
        ...(aofState ? { aofState } : {}),
      };
    }
    await sleep(PROBE_INTERVAL_MS);
  }
  restartBackoffMs?.();
  context.log(`${kind}: no recovery within ${RECOVERY_BOUND_MS} ms`);
  return { kind, target: target.name, pid: target.pid, at, ...(aofState ? { aofState } : {}) };
}

/** Where a fault of `kind` would hit now (target undefined: nothing to hit at the moment). */
async function aimAt(kind: FaultKind, context: NemesisContext, random: Random): Promise<Aim> {
  const pick = <T>(items: T[]): T | undefined => items[Math.floor(random() * items.length)];
  // A process between a crash and its restart is not there to hit.
  const byName = (test: (name: string) => boolean): PlatformProcess[] =>
    context.running().filter((p) => test(p.name) && isProcessAlive(p.pid));
  let target: PlatformProcess | undefined;
  let probe: () => Promise<boolean>;
  let restartBackoffMs: (() => number) | undefined;
  switch (kind) {
    case 'kill-gateway':
    case 'pause-gateway': {
      target = pick(byName((n) => /^gateway(-\d+)?$/.test(n)));
      const index = target?.name === 'gateway' ? 0 : Number(target?.name.split('-')[1] ?? 1) - 1;
      const url = context.gatewayUrls[index] ?? '';
      probe = () => healthy(`${url}/healthz`);
      break;
    }
    case 'kill-operator-leader': {
      // With the API server down (an earlier fault) the holder is unknown: no target yet.
      const holder = await leaseHolder(context.kubeConfig).catch(() => undefined);
      const name = holder === 'local-operator' ? 'operator' : holder?.replace(/^local-/, '');
      target = byName((n) => n === name)[0];
      const since = Date.now();
      probe = async () => {
        const renewed = await leaseRenewedAfter(context.kubeConfig, since);
        return renewed;
      };
      break;
    }
    case 'kill-kubelet-stand-in': {
      target = byName((n) => n === 'kubelet-stand-in')[0];
      const old = target?.pid;
      probe = async () => {
        const now = byName((n) => n === 'kubelet-stand-in')[0];
        return (
          now !== undefined &&
          now.pid !== old &&
          isProcessAlive(now.pid) &&
          (await nodesReady(context.kubeConfig))
        );
      };
      break;
    }
    case 'kill-engine': {
      // Only the engines of the instances the probe watches: make run's own examples run beside them.
      const engines = async (): Promise<Array<PlatformProcess & { pod: string }>> => {
        const kubelet = byName((n) => n === 'kubelet-stand-in')[0];
        if (!kubelet) return [];
        const pods = await context.instancePods().catch(() => []);
        const listening = listenersByAddress();
        // The engines only (Erlang's beam.smp, the stand-in's server): not the stand-in's other
        // children (tsx's esbuild service), nor CouchDB's couchjs, which CouchDB restarts itself.
        const ours = new Set(
          descendants(kubelet.pid).filter((pid) =>
            /beam\.smp|pouchdb-stand-in-server/.test(commandLine(pid)),
          ),
        );
        return pods.flatMap((pod) =>
          (listening.get(pod.podIP) ?? [])
            .filter((pid) => ours.has(pid))
            .slice(0, 1)
            .map((pid) => ({ name: `engine ${pod.name}`, pid, pod: pod.name })),
        );
      };
      // Every instance may have hibernated: one is woken first (through any gateway), so the crash
      // has a pod to hit even while a gateway or another instance's wake fails.
      if ((await engines()).length === 0) await context.wakeInstance().catch(() => false);
      const hit = pick(await engines());
      target = hit;
      const backoff = hit ? watchRestartBackoff(context, hit.pod) : undefined;
      restartBackoffMs = () => backoff?.stop() ?? 0;
      probe = () => context.instancesAnswer();
      break;
    }
    case 'kill-redis':
      target = pick(byName((n) => n.startsWith('redis-server')));
      probe = () => context.redisAnswers();
      break;
    case 'kill-kube-apiserver':
    case 'kill-etcd':
      target = byName((n) => n === kind.slice('kill-'.length))[0];
      probe = () => apiAnswers(context.kubeConfig);
      break;
  }
  return { target, probe, ...(restartBackoffMs ? { restartBackoffMs } : {}) };
}

/** CPU time (ms) a process has used so far; undefined once it is gone. */
function processCpuMs(pid: number): number | undefined {
  try {
    return cpuSeconds(pid) * 1000;
  } catch {
    return undefined;
  }
}

/** Every process below `pid` (the engines the kubelet stand-in started), from /proc. */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name, in parentheses, may hold spaces: the fields after it are fixed.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parents.set(Number(entry), Number(fields[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const walk = (parent: number): void => {
    for (const [child, of] of parents) {
      if (of !== parent) continue;
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

/**
 * Watches a crashed pod's status until stopped and returns the longest restart back-off it showed
 * (the kubelet stand-in reports CrashLoopBackOff for the whole back-off, 10 s or more, so a poll
 * every 500 ms cannot miss it); 0 when it was restarted at once.
 */
function watchRestartBackoff(context: NemesisContext, pod: string): { stop(): number } {
  let longest = 0;
  let stopped = false;
  void (async () => {
    while (!stopped) {
      const seen = (await context.instancePods().catch(() => [])).find((p) => p.name === pod);
      longest = Math.max(longest, backoffOf(seen?.waitingMessage));
      await sleep(500);
    }
  })();
  return {
    stop: () => {
      stopped = true;
      return longest;
    },
  };
}

/** The back-off of a kubelet's CrashLoopBackOff message ("back-off 40s restarting ..."), ms; 0 for any other. */
export function backoffOf(waitingMessage: string | undefined): number {
  const match = /^back-off (\d+)s\b/.exec(waitingMessage ?? '');
  return match ? Number(match[1]) * 1000 : 0;
}

/** The pids listening on each local address, from `ss` (the engines listen on their pod's IP). */
function listenersByAddress(): Map<string, number[]> {
  const byAddress = new Map<string, number[]>();
  let lines: string[] = [];
  try {
    lines = execFileSync('ss', ['-Hltnp'], { encoding: 'utf8' }).split('\n');
  } catch {
    return byAddress;
  }
  for (const line of lines) {
    const local = line.trim().split(/\s+/)[3];
    const address = local?.slice(0, local.lastIndexOf(':'));
    if (!address) continue;
    for (const [, pid] of line.matchAll(/pid=(\d+)/g))
      byAddress.set(address, [...(byAddress.get(address) ?? []), Number(pid)]);
  }
  return byAddress;
}

function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

async function healthy(url: string): Promise<boolean> {
  const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
  return response.ok;
}

async function apiAnswers(kubeConfig: KubeConfig): Promise<boolean> {
  await kubeConfig.makeApiClient(CoreV1Api).listNamespace();
  return true;
}

async function nodesReady(kubeConfig: KubeConfig): Promise<boolean> {
  const nodes = await kubeConfig.makeApiClient(CoreV1Api).listNode();
  return nodes.items.every((n) =>
    n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  );
}

const LEASE = { name: 'settee-operator', namespace: 'default' };

async function leaseHolder(kubeConfig: KubeConfig): Promise<string | undefined> {
  const lease = await kubeConfig.makeApiClient(CoordinationV1Api).readNamespacedLease(LEASE);
  return lease.spec?.holderIdentity ?? undefined;
}

async function leaseRenewedAfter(kubeConfig: KubeConfig, since: number): Promise<boolean> {
  const lease = await kubeConfig.makeApiClient(CoordinationV1Api).readNamespacedLease(LEASE);
  const renewed = lease.spec?.renewTime ? new Date(lease.spec.renewTime).getTime() : 0;
  return renewed > since;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
