import { LABEL_INSTANCE } from '../../../api/contract.js';
import { COMPONENT_QUEUE, LABEL_QUEUE_BINDING } from '../../../api/queue-binding.js';
import {
  LABEL_APP_COMPONENT,
  LABEL_APP_INSTANCE,
  LABEL_APP_MANAGED_BY,
  LABEL_APP_NAME,
  LABEL_APP_PART_OF,
  MANAGED_BY_SETTEE,
  PART_OF_SETTEE,
} from '../../../api/well-known.js';

export const APP_NAME_QUEUE = 'settee-queue';

/** The label selector of every object Settee owns for QueueBindings. */
export const QUEUE_OWNED_SELECTOR = `${LABEL_APP_NAME}=${APP_NAME_QUEUE},${LABEL_APP_MANAGED_BY}=${MANAGED_BY_SETTEE}`;

/** Labels of every object Settee owns for a binding; LABEL_QUEUE_BINDING is what the gateway selects on. */
export function buildQueueBindingLabels(binding: string): Record<string, string> {
  return {
    [LABEL_APP_NAME]: APP_NAME_QUEUE,
    [LABEL_INSTANCE]: binding,
    [LABEL_QUEUE_BINDING]: binding,
    [LABEL_APP_INSTANCE]: binding,
    [LABEL_APP_COMPONENT]: COMPONENT_QUEUE,
    [LABEL_APP_PART_OF]: PART_OF_SETTEE,
    [LABEL_APP_MANAGED_BY]: MANAGED_BY_SETTEE,
  };
}
