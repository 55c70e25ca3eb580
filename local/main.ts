/**
 * `make run`: the whole platform on this machine. It starts a real control plane (or uses the
 * current KUBECONFIG's cluster with SETTEE_USE_EXISTING_CLUSTER=1), a Redis for the example
 * QueueBinding, the operator, the kubelet stand-in, the gateway and the console (with a demo
 * tenant), applies examples/*.yaml, prints what to do next, and stops everything on Ctrl-C or SIGTERM.
 */
import { startLocalPlatform } from './platform.js';

const platform = await startLocalPlatform({ echo: true, console: true }).catch((err: unknown) => {
  console.error(`\nerror: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

let stopping = false;
const shutdown = (signal: string): void => {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping the local platform`);
  platform.stop().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
};
process.on('SIGINT', () => shutdown('SIGINT'));
process.on('SIGTERM', () => shutdown('SIGTERM'));
