import {
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type V1ObjectMeta,
} from '@kubernetes/client-node';
import { waitFor } from '../../local/wait.js';
import type { Condition } from '../../api/conditions.js';
import { SETTEE_API_VERSION, SETTEE_GROUP, SETTEE_VERSION } from '../../api/contract.js';
import { testControlPlane } from './kube.js';

/** The shape every Settee kind shares, as far as a test needs it. */
export interface SetteeObject<Spec> {
  apiVersion: typeof SETTEE_API_VERSION;
  kind: string;
  metadata: V1ObjectMeta;
  spec: Spec;
  status?: { conditions?: Condition[] };
}

export interface CustomObjectKind {
  kind: string;
  plural: string;
  /** How long waitFor polls before failing, unless a caller says otherwise. */
  defaultTimeoutMs: number;
}

/** The condition of `type` on an object's status, if it has one. */
export function conditionOf(object: { status?: { conditions?: Condition[] } }, type: string) {
  return object.status?.conditions?.find((condition) => condition.type === type);
}

/**
 * Create, read, merge-patch and wait-for helpers for one Settee kind in the test control plane, so
 * each kind's harness only adds what is particular to it. `Spec` is the object's spec type;
 * callers may pass an invalid spec (as a plain record) to exercise validation.
 */
export function customObjectHelpers<T extends SetteeObject<Spec>, Spec>(kind: CustomObjectKind) {
  const custom = () => testControlPlane().kubeConfig.makeApiClient(CustomObjectsApi);
  const api = (namespace: string) => ({
    group: SETTEE_GROUP,
    version: SETTEE_VERSION,
    plural: kind.plural,
    namespace,
  });
  const manifest = (namespace: string, name: string, spec: Spec | Record<string, unknown>): T =>
    ({ apiVersion: SETTEE_API_VERSION, kind: kind.kind, metadata: { name, namespace }, spec }) as T;
  const read = async (namespace: string, name: string): Promise<T> =>
    (await custom().getNamespacedCustomObject({ ...api(namespace), name })) as T;

  return {
    api,
    manifest,
    read,
    async create(namespace: string, name: string, spec: Spec | Record<string, unknown>): Promise<T> {
      return (await custom().createNamespacedCustomObject({
        ...api(namespace),
        body: manifest(namespace, name, spec),
      })) as T;
    },
    async mergePatch(namespace: string, name: string, patch: object): Promise<void> {
      await custom().patchNamespacedCustomObject(
        { ...api(namespace), name, body: patch },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    },
    /** Polls until the object satisfies `check`, and returns it. */
    waitFor(
      namespace: string,
      name: string,
      what: string,
      check: (object: T) => boolean,
      timeoutMs = kind.defaultTimeoutMs,
    ): Promise<T> {
      let last: T | undefined;
      return waitFor(
        `${kind.kind} ${namespace}/${name}: ${what}`,
        async () => {
          last = await read(namespace, name);
          return check(last) ? last : undefined;
        },
        { timeoutMs, intervalMs: 100 },
      ).catch((err: unknown) => {
        // What it was instead says why (a restore's message, a condition's reason).
        const status = JSON.stringify((last as { status?: unknown } | undefined)?.status);
        throw new Error(`${(err as Error).message}; its last status: ${status}`, { cause: err });
      });
    },
  };
}
