import {
  ApiException,
  HttpMethod,
  KubernetesObjectApi,
  PatchStrategy,
  type Configuration,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';

/** The one field manager under which Settee writes every object it owns. */
export const FIELD_MANAGER = 'settee-operator';

export interface ApplyOptions {
  fieldManager?: string;
  /** Server-side dry run: the API server validates and admits, but stores nothing. */
  dryRun?: boolean;
}

/**
 * The generic object client, with a server-side apply that sends the object's JSON as it is and
 * returns the answer as plain JSON. client-node's own patch walks its typed models four times per
 * call (a plain object must first become the typed model, or the fields it knows only under their
 * TypeScript spelling, such as `x-kubernetes-validations`, are silently dropped; then serialized;
 * the answer parsed and deserialized again): at 500 instances that was a tenth of the operator's
 * CPU. Plain JSON is also the shape the informer caches hold (timestamps as strings, not Dates).
 */
export class ObjectClient extends KubernetesObjectApi {
  /** With the kubeconfig's own configuration, or `configuration` (the operator's timed transport). */
  static create(kubeConfig: KubeConfig, configuration?: Configuration): ObjectClient {
    const client = configuration ? new ObjectClient(configuration) : kubeConfig.makeApiClient(ObjectClient);
    client.setDefaultNamespace(kubeConfig);
    return client;
  }

  async apply<T extends KubernetesObject>(desired: T, options: ApplyOptions = {}): Promise<T> {
    return this.serverSideApply<T>(await this.specUriPath(desired, 'patch'), desired, options);
  }

  /**
   * Server-side applies `replicas` through the object's scale subresource, as `kubectl scale` or an
   * autoscaler changes them: the API server handles a Scale of a few fields instead of the whole
   * object (a StatefulSet's pod template: about half the cost of an apply of it, measured), and the
   * kind's own controller sees the same change. `resourceVersion` makes it a precondition: the
   * write is refused with 409 unless the object is still that version. Returns the Scale's version.
   */
  async applyScale(
    object: KubernetesObject,
    replicas: number,
    resourceVersion: string,
    options: ApplyOptions = {},
  ): Promise<{ resourceVersion: string | undefined }> {
    const { name, namespace } = object.metadata ?? {};
    const body = {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name, namespace, resourceVersion },
      spec: { replicas },
    };
    const path = `${await this.specUriPath(object, 'patch')}/scale`;
    const scale = await this.serverSideApply(path, body, options);
    return { resourceVersion: scale.metadata?.resourceVersion };
  }

  private async serverSideApply<T extends KubernetesObject>(
    path: string,
    body: KubernetesObject,
    options: ApplyOptions,
  ): Promise<T> {
    const context = this.configuration.baseServer.makeRequestContext(path, HttpMethod.PATCH);
    context.setHeaderParam('Accept', 'application/json');
    context.setHeaderParam('Content-Type', PatchStrategy.ServerSideApply);
    if (options.dryRun) context.setQueryParam('dryRun', 'All');
    context.setQueryParam('fieldManager', options.fieldManager ?? FIELD_MANAGER);
    context.setQueryParam('force', 'true');
    context.setBody(JSON.stringify(body));
    await this.configuration.authMethods.default?.applySecurityAuthentication(context);
    const response = await this.configuration.httpApi.send(context).toPromise();
    const text = await response.body.text();
    // As client-node's own calls fail, so that callKube turns it into a KubeApiError.
    if (response.httpStatusCode < 200 || response.httpStatusCode > 299)
      throw new ApiException(response.httpStatusCode, 'Unsuccessful HTTP Request', text, response.headers);
    return JSON.parse(text) as T;
  }
}

/**
 * Writes `desired` with server-side apply, taking ownership of exactly the fields it names. Force
 * is set because Settee is the only intended writer of the fields it applies; a conflict with
 * another manager means someone edited an owned field by hand, and the spec wins.
 */
export function applyObject<T extends KubernetesObject>(
  client: ObjectClient,
  desired: T,
  options: ApplyOptions = {},
): Promise<T> {
  return client.apply(desired, options);
}

export function makeObjectClient(kubeConfig: KubeConfig): ObjectClient {
  return ObjectClient.create(kubeConfig);
}
