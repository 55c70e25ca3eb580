/**
 * The JSON the console server answers with, as the page reads it. The shapes are the server's own
 * (console/api/*-view.ts and friends), imported as types only: the bundle holds no server code,
 * and a field the server changes is a type error here rather than a page that reads `undefined`.
 */
export type { Condition } from '../../../../api/conditions.js';
export type { QueueEnv } from '../../../../api/queue-binding.js';
export type { BindingDetail, BindingRow } from '../../../api/binding-view.js';
export type { EventView } from '../../../api/events.js';
export type {
  InstanceCredentials,
  InstanceDetail,
  InstanceList,
  InstanceRow,
} from '../../../api/instance-view.js';
export type {
  AttemptView,
  MessageDetail,
  MessageGroup,
  MessagePage,
  MessageRow,
  MessageState,
} from '../../../api/message-view.js';
export type { SessionView } from '../../../api/session-routes.js';
export type {
  WorkflowRunPage,
  WorkflowRunRow,
  WorkflowRunWaiters,
  WorkflowStepView,
} from '../../../api/workflow-run-view.js';
export type { ErrorBody } from '../../../http/errors.js';
export type { Permission } from '../../../kube/access-review.js';
export type { ReachableNamespaces } from '../../../kube/namespace-access.js';

/**
 * A dead letter as the gateway's DLQ API answers it (QStash's DlqMessage), the fields the page
 * shows. The console reaches the gateway over HTTP only, so this shape is the QStash API's, not
 * an import from gateway/.
 */
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
