/**
 * A CouchInstance as a request names it. Its own module because the proxy, the envelope and the
 * gateway's errors all speak of it, and the errors must not import the proxy that throws them.
 */
export interface InstanceRef {
  namespace: string;
  name: string;
}
