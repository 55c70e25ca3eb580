import type { Redis } from 'ioredis';
import type { QueueTarget } from '../core/binding-registry.js';
import type { QueueConfig } from '../core/config.js';
import type { QueueKeys } from '../core/keys.js';
import { eventCapOf } from '../core/message-event.js';
import { DeadLetterQueue } from './dead-letter-queue.js';
import { MessageStore } from './message-store.js';
import { PendingMessages } from './pending-messages.js';
import { QueueStore, queueWakeupsOf } from './queue-store.js';
import type { QueueWakeups } from './queue-wakeups.js';
import { WorkflowRunStore, type WorkflowRunLimits } from './workflow-run-store.js';
import { WorkflowEventStore } from './workflow-event-store.js';
import { WorkflowLetterStore } from './workflow-letter-store.js';
import { FlowControlStore } from './flow-control-store.js';
import type { QueueMessage } from '../core/message.js';

/**
 * The stores of one binding's database, each built the one way the API and the workers need it:
 * the binding's event cap and this replica's wake-ups of the database's queues, so no caller can
 * leave the wake-ups out (a delayed message at the head of a queue would then wait for the next
 * maintenance pass).
 */
export class BindingStores {
  readonly redis: Redis;
  readonly keys: QueueKeys;
  /** eventCapOf the binding: 0 when events are not recorded. */
  readonly eventCap: number;
  private readonly config: QueueConfig;
  private readonly runLimits: WorkflowRunLimits;

  constructor(options: { redis: Redis; keys: QueueKeys; config: QueueConfig; target: QueueTarget }) {
    this.redis = options.redis;
    this.keys = options.keys;
    this.config = options.config;
    this.eventCap = eventCapOf(options.config, options.target);
    const { maxWorkflowSteps, maxWorkflowContextBytes } = options.target.limits;
    this.runLimits = { maxSteps: maxWorkflowSteps, maxContextBytes: maxWorkflowContextBytes };
  }

  /** This replica's wake-ups of the database's queues (queueWakeupsOf); undefined when turned off. */
  get wakeups(): QueueWakeups | undefined {
    return queueWakeupsOf(this.redis, this.keys, this.config);
  }

  messages(): MessageStore {
    return new MessageStore(this.redis, this.keys, this.eventCap, this.wakeups);
  }

  queues(): QueueStore {
    return new QueueStore(this.redis, this.keys, this.eventCap, this.wakeups);
  }

  deadLetters(): DeadLetterQueue {
    return new DeadLetterQueue(this.redis, this.keys, this.eventCap, this.wakeups);
  }

  pending(): PendingMessages {
    return new PendingMessages(this.redis, this.keys, this.eventCap, this.wakeups);
  }

  workflowRuns(): WorkflowRunStore {
    return new WorkflowRunStore(this.redis, this.keys, this.runLimits);
  }

  workflowLetters(): WorkflowLetterStore {
    return new WorkflowLetterStore(this.redis, this.keys, this.eventCap);
  }

  workflowEvents(): WorkflowEventStore {
    return new WorkflowEventStore(this.redis, this.keys, {
      runs: this.workflowRuns(),
      enqueue: (message) => this.enqueueOne(message),
      cancel: async (ids) => {
        await this.pending().cancel(ids);
      },
    });
  }

  /** Stores one message the gateway makes itself (not a publish: no deduplication), in its flow-control key if it has one. */
  async enqueueOne(message: QueueMessage): Promise<void> {
    if (message.flowControl !== undefined)
      await new FlowControlStore(this.redis, this.keys, this.eventCap).enqueue([message], {
        deduplicationWindowMs: 0,
      });
    else await this.messages().enqueue([message]);
  }
}
