/**
 * The JSON the console server answers with, as the page reads it. The server builds these in
 * console/api/*-view.ts; the page keeps its own copy of the shapes so the bundle holds no server code.
 */
export interface SessionView {
  username: string;
  namespace: string;
  csrfToken: string;
  expiresAt: string;
}

export interface Permission {
  allowed: boolean;
  reason?: string;
}

export type Phase =
  'Pending' | 'Starting' | 'Running' | 'Hibernating' | 'Hibernated' | 'Waking' | 'Failed' | 'Unknown';

export interface InstanceRow {
  name: string;
  phase: Phase;
  plan: 'free' | 'paid';
  endpoint: string | null;
  size: string;
  keepAlive: boolean;
  idleAfter: string | null;
  lastColdStart: string | null;
  createdAt: string | null;
}

export interface InstanceList {
  resourceVersion: string;
  items: InstanceRow[];
  permissions: { create: Permission; delete: Permission; watch: Permission };
}

export interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
}

export interface EventView {
  type: string;
  reason: string;
  message: string;
  count: number;
  lastSeen: string | null;
}

export interface InstanceDetail {
  row: InstanceRow;
  spec: {
    addons?: {
      largerStorage?: { size: string };
      backups?: { schedule: string; retain?: number };
      regionPinning?: { region: string };
    };
  };
  conditions: Condition[];
  hibernatedAt: string | null;
  lastActivityTime: string | null;
  credentialsSecret: string;
  events: EventView[] | null;
  permissions: { patch: Permission; delete: Permission; readCredentials: Permission };
}

export interface Credentials {
  username: string;
  password: string;
  url: string;
}

export interface BindingRow {
  name: string;
  engine: string;
  queueUrl: string | null;
  ready: boolean;
  readyMessage: string | null;
}

export interface BindingDetail {
  row: BindingRow;
  connection: { host: string; port: number; tls: boolean };
  signingKeys: { currentGeneration: number; nextGeneration?: number; promoteAfter?: string } | null;
  conditions: Condition[];
  events: EventView[] | null;
  permissions: { readEnv: Permission; rotate: Permission };
}

export type QueueEnv = Record<
  'VQUEUE_URL' | 'VQUEUE_TOKEN' | 'VQUEUE_CURRENT_SIGNING_KEY' | 'VQUEUE_NEXT_SIGNING_KEY',
  string
>;

export interface ErrorBody {
  error: string;
  message: string;
  fields?: Record<string, string>;
  reason?: string;
}

/** A dead letter as the queue's DLQ API gives it (QStash's DlqMessage), the fields the page shows. */
export interface DeadLetter {
  dlqId: string;
  messageId: string;
  url: string;
  method?: string;
  createdAt: number;
  responseStatus?: number;
  responseBody?: string;
  error?: string;
  maxRetries?: number;
}

export type MessageGroup = 'in-flight' | 'delivered' | 'failed' | 'cancelled';

export interface AttemptView {
  startedAt: number;
  outcome: 'pending' | 'delivered' | 'failed';
  responseStatus: number | null;
  error: string | null;
  responseBody: string | null;
}

/** One message of a binding, folded from its queue events (console/api/message-view.ts). */
export interface MessageRow {
  messageId: string;
  url: string;
  label: string | null;
  state: 'Delayed' | 'Queued' | 'Delivering' | 'Retrying' | 'Delivered' | 'Failed' | 'Cancelled';
  group: MessageGroup;
  attempts: number;
  historyComplete: boolean;
  lastResponseStatus: number | null;
  lastError: string | null;
  nextDeliveryAt: number | null;
  createdAt: number | null;
  updatedAt: number;
}

export interface MessageDetail extends MessageRow {
  method: string | null;
  headers: [string, string][];
  body: string | null;
  attemptLog: AttemptView[];
}

export interface MessagePage {
  messages: MessageRow[];
  partial: boolean;
  eventsRead: number;
}

/** GET /api/session/namespaces: where the user's own role lets the console show something. */
export interface ReachableNamespaces {
  namespaces: string[];
  listed: boolean;
  truncated: boolean;
}
