/**
 * `make run`: the whole platform on this machine. It starts a real control plane (or uses the
 * current KUBECONFIG's cluster with SETTEE_USE_EXISTING_CLUSTER=1), a Redis for the example
 * QueueBinding, the operator, the kubelet stand-in, the gateway and the console (with a demo
 * tenant), applies examples/*.yaml, prints what to do next, and stops everything on Ctrl-C or
 * SIGTERM. Killed hard (SIGKILL, a closed terminal), its watchdog stops the children.
 *
 * Environment: SETTEE_GATEWAY_PORT (8080; refused with a message when taken), SETTEE_LOCAL_STATE_DIR
 * (.settee/local: kubeconfig, env file, logs, etcd data and volumes; one `make run` per folder).
 */
import { startParentWatchdog } from './parent-watchdog.js';
import { startLocalPlatform } from './platform.js';

const DEFAULT_GATEWAY_PORT = 8080;

const watchdog = startParentWatchdog();
const starting = startLocalPlatform({
  echo: true,
  console: true,
  stateDir: process.env.SETTEE_LOCAL_STATE_DIR || undefined,
  gatewayPort: Number(process.env.SETTEE_GATEWAY_PORT || DEFAULT_GATEWAY_PORT),
});

// Listening from the start: a Ctrl-C while the platform starts stops it in order once it is up,
// rather than ending this process at once with the children left to the watchdog. A second one
// does not wait.
let stopping = false;
const shutdown = (signal: string): void => {
  if (stopping) process.exit(130);
  stopping = true;
  console.log(`\n${signal}: stopping the local platform (again to quit at once)`);
  starting
    .then((platform) => platform.stop())
    .then(
      () => {
        watchdog.release();
        process.exit(0);
      },
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
};
process.on('SIGINT', () => shutdown('SIGINT'));
process.on('SIGTERM', () => shutdown('SIGTERM'));

await starting.catch((err: unknown) => {
  console.error(`\nerror: ${err instanceof Error ? err.message : String(err)}`);
  watchdog.release();
  process.exit(1);
});
