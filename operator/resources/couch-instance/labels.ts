import { LABEL_INSTANCE } from '../../../api/contract.js';
import {
  APP_NAME_COUCHDB,
  COMPONENT_DATABASE,
  LABEL_APP_COMPONENT,
  LABEL_APP_INSTANCE,
  LABEL_APP_MANAGED_BY,
  LABEL_APP_NAME,
  LABEL_APP_PART_OF,
  LABEL_APP_VERSION,
  MANAGED_BY_SETTEE,
  PART_OF_SETTEE,
} from '../../../api/well-known.js';

/** Labels that never change for an instance's lifetime: the only ones a selector may use. */
export function buildSelectorLabels(instance: string): Record<string, string> {
  return { [LABEL_APP_NAME]: APP_NAME_COUCHDB, [LABEL_INSTANCE]: instance };
}

/** Every object Settee owns for an instance carries these (COUCH_OWNED_SELECTOR matches them). */
export function buildCommonLabels(instance: string): Record<string, string> {
  return {
    ...buildSelectorLabels(instance),
    [LABEL_APP_INSTANCE]: instance,
    [LABEL_APP_COMPONENT]: COMPONENT_DATABASE,
    [LABEL_APP_PART_OF]: PART_OF_SETTEE,
    [LABEL_APP_MANAGED_BY]: MANAGED_BY_SETTEE,
  };
}

/** The pod's labels also name the CouchDB version, which may change, so only the pod template has it. */
export function buildPodLabels(instance: string, version: string): Record<string, string> {
  return { ...buildCommonLabels(instance), [LABEL_APP_VERSION]: version };
}
