/**
 * The environment the queue benchmarks start a gateway with, written once. Their receivers listen
 * on loopback, which the gateway's SSRF guard refuses unless it is allowed, as the local platform
 * allows it (local/platform.ts).
 */
const LOOPBACK = '127.0.0.0/8';

/**
 * For the gateway compiled as the image holds it (compilePlatform's `start('gateway', …)`):
 * it watches `namespace` on the benchmark's control plane and listens on `port`; `env` comes last.
 */
export function buildCompiledGatewayEnv(
  options: { kubeconfigPath: string; port: number; namespace: string },
  env: Record<string, string> = {},
): NodeJS.ProcessEnv {
  return {
    ...process.env,
    KUBECONFIG: options.kubeconfigPath,
    SETTEE_GATEWAY_PORT: String(options.port),
    SETTEE_WATCH_NAMESPACE: options.namespace,
    SETTEE_LOG_LEVEL: 'warn',
    SETTEE_QUEUE_SSRF_ALLOW: LOOPBACK,
    ...env,
  };
}

/**
 * For the queue gateway process (spawnQueueGateway), whose Redis keys start with `keyPrefix`;
 * `env` comes last (worker concurrency, batch size, what the bench varies).
 */
export function buildQueueGatewayEnv(
  keyPrefix: string,
  env: Record<string, string> = {},
): Record<string, string> {
  return {
    SETTEE_QUEUE_KEY_PREFIX: keyPrefix,
    SETTEE_QUEUE_SSRF_ALLOW: LOOPBACK,
    SETTEE_LOG_LEVEL: 'error',
    ...env,
  };
}
