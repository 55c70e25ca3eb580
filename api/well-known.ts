/**
 * Labels and annotations Settee puts on the objects it creates for a CouchInstance, named once.
 * LABEL_INSTANCE and the gateway-facing annotations live in contract.ts.
 */

export const LABEL_APP_NAME = 'app.kubernetes.io/name';
export const LABEL_APP_INSTANCE = 'app.kubernetes.io/instance';
export const LABEL_APP_COMPONENT = 'app.kubernetes.io/component';
export const LABEL_APP_PART_OF = 'app.kubernetes.io/part-of';
export const LABEL_APP_MANAGED_BY = 'app.kubernetes.io/managed-by';
/** Mutable (it follows spec.version), so it is never part of a selector. */
export const LABEL_APP_VERSION = 'app.kubernetes.io/version';

export const APP_NAME_COUCHDB = 'couchdb';
export const COMPONENT_DATABASE = 'database';
export const PART_OF_SETTEE = 'settee';
export const MANAGED_BY_SETTEE = 'settee-operator';

/**
 * A digest of what the operator last applied to an owned object. When the cached object carries
 * the digest of the desired object, the apply is skipped: steady-state reconciles make no writes.
 */
export const ANNOTATION_APPLIED_DIGEST = 'settee.dev/applied-digest';
/** On the pod template: a digest of the CouchDB configuration, so a change rolls the pod. */
export const ANNOTATION_CONFIG_DIGEST = 'settee.dev/config-digest';

/** The label selector that matches every object Settee owns for CouchInstances. */
export const COUCH_OWNED_SELECTOR = `${LABEL_APP_NAME}=${APP_NAME_COUCHDB},${LABEL_APP_MANAGED_BY}=${MANAGED_BY_SETTEE}`;
