import crypto from 'node:crypto';
import {
  PatchStrategy,
  setHeaderOptions,
  type CoreV1Api,
  type CoreV1Event,
  type KubernetesObject,
} from '@kubernetes/client-node';
import type { Logger } from 'winston';
import { errorMessage } from '../observability/logger.js';
import { callKube, isNotFound } from './errors.js';
import { DEFAULT_EVENT_SPAM_POLICY, EventSpamFilter, type EventSpamPolicy } from './event-spam-filter.js';

export type EventType = 'Normal' | 'Warning';

export interface EventRecord {
  type: EventType;
  /** PascalCase, machine-readable: CredentialsCreated, Hibernated, Woken, ... */
  reason: string;
  /** For a person; no secrets. */
  message: string;
}

/** Writes Kubernetes Events about objects, as `kubectl describe` shows them. */
export interface EventRecorder {
  /** Best effort: a failure is logged, never thrown, so an Event can't fail a reconcile. */
  record(involved: KubernetesObject, event: EventRecord): Promise<void>;
}

export interface EventRecorderOptions {
  core: CoreV1Api;
  /** `source.component` / `reportingController`, e.g. `settee-operator`. */
  component: string;
  /** This replica's identity (`reportingInstance`). */
  instance: string;
  logger: Logger;
  /** How many distinct events to remember for counting repeats; the oldest are forgotten first. */
  cacheSize?: number;
  /** Per object and reason, how many Events may be written (DEFAULT_EVENT_SPAM_POLICY). */
  spamPolicy?: EventSpamPolicy;
  now?: () => Date;
}

interface SeenEvent {
  name: string;
  namespace: string;
  count: number;
}

/**
 * core/v1 Events, like client-go's recorder and EventCorrelator: a repeat of the same (object,
 * type, reason, message) bumps `count` and `lastTimestamp` of the Event already written instead of
 * writing another, and each (object, reason) has a token bucket that every write takes from, so
 * one object that fails again and again, in ever new words, cannot flood etcd. What the bucket
 * refuses is dropped (and logged at debug level).
 */
export class KubeEventRecorder implements EventRecorder {
  private readonly seen = new Map<string, SeenEvent>();
  private readonly spam: EventSpamFilter;
  private readonly now: () => Date;

  constructor(private readonly options: EventRecorderOptions) {
    this.now = options.now ?? (() => new Date());
    this.spam = new EventSpamFilter(options.spamPolicy ?? DEFAULT_EVENT_SPAM_POLICY);
  }

  async record(involved: KubernetesObject, event: EventRecord): Promise<void> {
    const metadata = involved.metadata ?? {};
    const namespace = metadata.namespace ?? 'default';
    const objectId = metadata.uid ?? `${namespace}/${metadata.name}`;
    if (!this.spam.allow([objectId, event.reason].join('\u0000'), this.now().getTime())) {
      this.options.logger.debug('Event dropped: too many of this reason for this object', {
        reason: event.reason,
        involved: `${metadata.namespace ?? ''}/${metadata.name ?? ''}`,
      });
      return;
    }
    const dedupKey = [objectId, event.type, event.reason, event.message].join('\u0000');
    try {
      const previous = this.seen.get(dedupKey);
      if (previous && (await this.bump(previous))) return;
      const created = await this.create(involved, namespace, event);
      this.remember(dedupKey, { name: created, namespace, count: 1 });
    } catch (err) {
      this.options.logger.warn('could not write an Event', {
        reason: event.reason,
        involved: `${metadata.namespace ?? ''}/${metadata.name ?? ''}`,
        error: errorMessage(err),
      });
    }
  }

  /** False when the earlier Event is gone (Events expire), so the caller writes a new one. */
  private async bump(previous: SeenEvent): Promise<boolean> {
    try {
      const count = previous.count + 1;
      await callKube(() =>
        this.options.core.patchNamespacedEvent(
          {
            name: previous.name,
            namespace: previous.namespace,
            body: { count, lastTimestamp: this.now().toISOString() },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      );
      previous.count = count;
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  private async create(involved: KubernetesObject, namespace: string, event: EventRecord): Promise<string> {
    const metadata = involved.metadata ?? {};
    const now = this.now();
    const name = `${metadata.name ?? 'unknown'}.${crypto.randomBytes(8).toString('hex')}`;
    const body: CoreV1Event = {
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: involved.apiVersion,
        kind: involved.kind,
        name: metadata.name,
        namespace: metadata.namespace,
        uid: metadata.uid,
        resourceVersion: metadata.resourceVersion,
      },
      type: event.type,
      reason: event.reason,
      message: event.message,
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component: this.options.component },
      reportingComponent: this.options.component,
      reportingInstance: this.options.instance,
    };
    await callKube(() => this.options.core.createNamespacedEvent({ namespace, body }));
    return name;
  }

  private remember(key: string, seen: SeenEvent): void {
    this.seen.delete(key);
    this.seen.set(key, seen);
    const limit = this.options.cacheSize ?? 4096;
    for (const oldest of this.seen.keys()) {
      if (this.seen.size <= limit) break;
      this.seen.delete(oldest);
    }
  }
}
