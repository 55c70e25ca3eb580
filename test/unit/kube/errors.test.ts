import { ApiException } from '@kubernetes/client-node';
import {
  callKube,
  isAlreadyExists,
  isConflict,
  isNotFound,
  KubeApiError,
  toKubeApiError,
} from '../../../kube/errors.js';

function status(code: number, reason: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message };
}

describe('toKubeApiError', () => {
  it('when client-node throws an ApiException with a Status body, then code, reason and message are kept', () => {
    const err = toKubeApiError(
      new ApiException(
        409,
        'Unsuccessful HTTP Request',
        status(409, 'Conflict', 'the object has been modified'),
        {},
      ),
    );
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({
      code: 'KUBE_API_ERROR',
      statusCode: 409,
      reason: 'Conflict',
      message: 'the object has been modified',
    });
    expect(err?.isConflict).toBe(true);
    expect(err?.isAlreadyExists).toBe(false);
  });

  it('when the Status body arrives as a JSON string, then it is parsed', () => {
    const body = JSON.stringify(status(404, 'NotFound', 'leases "x" not found'));
    const err = toKubeApiError(new ApiException(404, 'Unsuccessful HTTP Request', body, {}));
    expect(err).toMatchObject({ statusCode: 404, reason: 'NotFound', isNotFound: true });
  });

  it('when a create collides, then it is AlreadyExists and not a conflict to retry', () => {
    const err = new ApiException(409, 'x', status(409, 'AlreadyExists', 'exists'), {});
    expect(isAlreadyExists(err)).toBe(true);
    expect(isConflict(err)).toBe(false);
  });

  it('when a watch fails with a statusCode, then it converts too', () => {
    expect(toKubeApiError(Object.assign(new Error('Gone'), { statusCode: 410 }))?.isGone).toBe(true);
  });

  it('when the failure is not an API answer, then there is no KubeApiError', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(toKubeApiError(refused)).toBeUndefined();
    expect(isNotFound(refused)).toBe(false);
  });

  it('when a call fails through callKube, then the rejection is the converted error with the original as cause', async () => {
    const original = new ApiException(422, 'x', status(422, 'Invalid', 'spec.plan: Unsupported value'), {});
    const thrown = await callKube(() => Promise.reject(original)).catch((err: unknown) => err);
    expect(thrown).toBeInstanceOf(KubeApiError);
    expect((thrown as KubeApiError).cause).toBe(original);
    expect((thrown as KubeApiError).reason).toBe('Invalid');
  });
});
