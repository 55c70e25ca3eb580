/**
 * The shape every API object shares (apiVersion, kind, metadata), re-exported so code outside
 * kube/ (the runtime's predicates and key mappers) names it without importing client-node.
 */
export type { KubernetesObject } from '@kubernetes/client-node';
