/**
 * Where each API step of a wake spends its time, from the API server's own audit log
 * (BENCH_API_HOPS=1 in bench/cold-start.ts). Each of the steps annotation, scale, pod and bind is
 * one write by one component after it saw the step before; the audit log gives when the API server
 * received that write and when it answered it, so a step splits into three parts:
 *   react: the step before seen by the bench's watch -> the write received (the component's watch
 *          event, its own work, its client; for the annotation: the request sent -> the gateway's write)
 *   write: received -> answered (authentication, admission, etcd, in the API server)
 *   watch: answered -> the bench's watch sees the change (the API server's watch fan-out)
 * The audit backend writes in batches off the request path (mode batch), so the log costs the
 * writes little; the audit policy records only the writes of the wake path, at level Metadata.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { quantile, round } from '../lib/stats.js';
import type { WakeMilestones } from '../lib/wake-timeline.js';

/** The writes a wake makes on its critical path, in order, and the milestone the bench sees each at. */
const HOPS = [
  { step: 'annotation', verb: 'patch', resource: 'couchinstances', subresource: '', seen: 'annotated' },
  { step: 'scale', verb: 'patch', resource: 'statefulsets', subresource: 'scale', seen: 'scaledUp' },
  { step: 'pod', verb: 'create', resource: 'pods', subresource: '', seen: 'podCreated' },
  { step: 'bind', verb: 'create', resource: 'pods', subresource: 'binding', seen: 'podScheduled' },
] as const;

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted, Panic]
rules:
  - level: Metadata
    verbs: [create, patch, update]
    resources:
      - group: settee.dev
        resources: [couchinstances]
      - group: apps
        resources: [statefulsets, statefulsets/scale]
      - group: ''
        resources: [pods, pods/binding]
  - level: None
`;

/** The API server flags that write the audit log into `dir`, and the log's path. */
export async function apiHopsAudit(dir: string): Promise<{ args: string[]; logPath: string }> {
  await fsp.mkdir(dir, { recursive: true });
  const policy = path.join(dir, 'audit-policy.yaml');
  await fsp.writeFile(policy, POLICY);
  const logPath = path.join(dir, 'audit.log');
  return {
    logPath,
    args: [
      `--audit-policy-file=${policy}`,
      `--audit-log-path=${logPath}`,
      '--audit-log-format=json',
      '--audit-log-mode=batch',
      '--audit-log-batch-max-wait=1s',
    ],
  };
}

interface AuditedWrite {
  verb: string;
  resource: string;
  subresource: string;
  /** Epoch ms, to the microsecond. */
  receivedAt: number;
  answeredAt: number;
}

/** RFC 3339 with up to nine fraction digits -> epoch ms (Date.parse keeps three). */
function epochMs(stamp: string): number {
  const match = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(stamp);
  if (!match) return Number.NaN;
  return Date.parse(`${match[1]}Z`) + Number(`0.${match[2] ?? '0'}`) * 1000;
}

export async function readAuditedWrites(logPath: string): Promise<AuditedWrite[]> {
  const text = await fsp.readFile(logPath, 'utf8');
  const writes: AuditedWrite[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const event = JSON.parse(line) as {
      stage: string;
      verb: string;
      objectRef?: { resource?: string; subresource?: string };
      requestReceivedTimestamp: string;
      stageTimestamp: string;
    };
    if (event.stage !== 'ResponseComplete') continue;
    writes.push({
      verb: event.verb,
      resource: event.objectRef?.resource ?? '',
      subresource: event.objectRef?.subresource ?? '',
      receivedAt: epochMs(event.requestReceivedTimestamp),
      answeredAt: epochMs(event.stageTimestamp),
    });
  }
  return writes;
}

/** One wake as the bench saw it, on performance.now()'s clock. */
export interface WakeWindow {
  sentAt: number;
  answeredAt: number;
  seen: WakeMilestones;
}

type Parts = { react: number; write: number; watch: number };

/** Each step's react / write / watch for one wake (NaN where its write or milestone is missing). */
function wakeHops(writes: readonly AuditedWrite[], wake: WakeWindow): Map<string, Parts> {
  const epoch = (at: number | undefined): number =>
    at === undefined ? Number.NaN : performance.timeOrigin + at;
  const from = epoch(wake.sentAt);
  const to = epoch(wake.answeredAt);
  const hops = new Map<string, Parts>();
  let before = from;
  for (const hop of HOPS) {
    const write = writes.find(
      (w) =>
        w.verb === hop.verb &&
        w.resource === hop.resource &&
        w.subresource === hop.subresource &&
        w.receivedAt >= from &&
        w.receivedAt <= to,
    );
    const seenAt = epoch(wake.seen[hop.seen]);
    hops.set(hop.step, {
      react: (write?.receivedAt ?? Number.NaN) - before,
      write: write ? write.answeredAt - write.receivedAt : Number.NaN,
      watch: seenAt - (write?.answeredAt ?? Number.NaN),
    });
    before = seenAt;
  }
  return hops;
}

/** Per step and part, p50 / p95 over the wakes, in ms. */
export function apiHops(
  writes: readonly AuditedWrite[],
  wakes: readonly WakeWindow[],
): Record<string, Record<keyof Parts, string>> {
  const perWake = wakes.map((wake) => wakeHops(writes, wake));
  const summary = (values: number[]): string => {
    const seen = values.filter((v) => !Number.isNaN(v));
    if (seen.length === 0) return 'not seen';
    return `${round(quantile(seen, 0.5))} / ${round(quantile(seen, 0.95))}`;
  };
  return Object.fromEntries(
    HOPS.map(({ step }) => {
      const parts = perWake.map((hops) => hops.get(step) as Parts);
      return [
        step,
        {
          react: summary(parts.map((p) => p.react)),
          write: summary(parts.map((p) => p.write)),
          watch: summary(parts.map((p) => p.watch)),
        },
      ];
    }),
  );
}
