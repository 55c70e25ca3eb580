import { randomBytes } from 'node:crypto';
import type { CustomObjectsApi } from '@kubernetes/client-node';
import { SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import { ANNOTATION_ROTATE_SIGNING_KEYS, QUEUE_BINDING_PLURAL } from '../../../api/queue-binding.js';
import { patchAnnotation } from '../../../kube/annotation-patch.js';
import { GATEWAY_FIELD_MANAGER } from '../../field-manager.js';
import type { BindingRegistry, QueueTarget } from '../core/binding-registry.js';
import { KeyRotationPendingError, KeyRotationTimeoutError } from '../core/errors.js';

/** QStash's answer to GET /v2/keys and POST /v2/keys/rotate. */
export interface SigningKeys {
  current: string;
  next: string;
}

/** Writes the rotation annotation on a QueueBinding; separate so the route can be tested without a cluster. */
export type RotationRequestWriter = (
  binding: { namespace: string; name: string },
  requestValue: string,
) => Promise<void>;

/**
 * Both keys, never "": the SDK's Receiver ignores a configured pair unless both are set. The
 * current key stands in for next only while an operator older than the two-key model still
 * writes the env Secret (its next was "" outside a rotation); the pair verifies all the same.
 */
export function signingKeysOf(target: QueueTarget): SigningKeys {
  return { current: target.signingKey, next: target.nextSigningKey || target.signingKey };
}

/** The production writer: a JSON merge patch of the one annotation the operator watches for rotations. */
export function rotationAnnotationWriter(customObjects: CustomObjectsApi): RotationRequestWriter {
  return async (binding, requestValue) => {
    await patchAnnotation(customObjects, {
      object: {
        group: SETTEE_GROUP,
        version: SETTEE_VERSION,
        plural: QUEUE_BINDING_PLURAL,
        namespace: binding.namespace,
        name: binding.name,
      },
      annotation: ANNOTATION_ROTATE_SIGNING_KEYS,
      value: requestValue,
      fieldManager: GATEWAY_FIELD_MANAGER,
    });
  };
}

function isAnswered(target: QueueTarget | undefined, requestValue: string, before: QueueTarget): boolean {
  if (!target || target.signingKeyRotation !== requestValue) return false;
  // The env Secret and the status arrive on separate watches: wait until the keys moved too.
  return target.signingKey !== before.signingKey;
}

function isRotationRequested(target: QueueTarget): boolean {
  return (
    target.requestedSigningKeyRotation !== '' &&
    target.requestedSigningKeyRotation !== target.signingKeyRotation
  );
}

/**
 * POST /v2/keys/rotate, as QStash does it: the next key becomes current (deliveries are signed
 * with it from then on) and a new next key is made. The gateway asks the operator, which alone
 * derives keys and writes the env Secret, through the same annotation an administrator sets, and
 * answers the new pair once its informers show the operator's answer. A receiver still holding
 * the previous pair verifies the new deliveries with its next key. A request the operator has not
 * answered yet is a 409: a second write would replace it, and one of the two callers would wait
 * for an answer that never comes.
 */
export async function rotateSigningKeys(options: {
  registry: BindingRegistry;
  target: QueueTarget;
  write: RotationRequestWriter;
  timeoutMs: number;
}): Promise<SigningKeys> {
  const { registry, target, write, timeoutMs } = options;
  if (isRotationRequested(target)) {
    throw new KeyRotationPendingError(
      'a signing key rotation is already requested and the operator has not answered it yet; GET /v2/keys shows the keys once it has',
    );
  }
  const requestValue = `api-${new Date().toISOString()}-${randomBytes(4).toString('hex')}`;
  let unsubscribe = (): void => undefined;
  let timer: NodeJS.Timeout | undefined;
  const answered = new Promise<QueueTarget>((resolve, reject) => {
    unsubscribe = registry.subscribe((event) => {
      if (
        event.type === 'upsert' &&
        event.target.key === target.key &&
        isAnswered(event.target, requestValue, target)
      )
        resolve(event.target);
    });
    timer = setTimeout(
      () =>
        reject(
          new KeyRotationTimeoutError(
            `the rotation is requested but the operator has not answered within ${timeoutMs} ms; GET /v2/keys shows the keys once it has`,
          ),
        ),
      timeoutMs,
    );
  });
  try {
    await write(target, requestValue);
    const current = registry.get(target.namespace, target.name);
    if (current && isAnswered(current, requestValue, target)) return signingKeysOf(current);
    return signingKeysOf(await answered);
  } finally {
    clearTimeout(timer);
    unsubscribe();
    answered.catch(() => undefined);
  }
}
