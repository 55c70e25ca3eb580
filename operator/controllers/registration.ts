import type { Registry } from 'prom-client';
import type { Logger } from 'winston';
import type { OperatorConfig } from '../config.js';
import type { KubeClients } from '../../kube/clients.js';
import type { EventRecorder } from '../../kube/events.js';
import type { InformerFactory } from '../../kube/informer-factory.js';
import type { ControllerDefinition } from '../../kube/controller-runtime/controller.js';

/** What the composition root hands every controller module. */
export interface ControllerDeps {
  config: OperatorConfig;
  clients: KubeClients;
  /** Shared informers, already scoped to the watched namespace; started and awaited by main. */
  informers: InformerFactory;
  events: EventRecorder;
  /** Child logger with `{controller: name}`. */
  logger: Logger;
  /** The operator's registry, for a controller's own metrics (e.g. instances by phase). */
  metricsRegistry: Registry;
}

/**
 * A controller module's entry in registered-controllers.ts. `create` builds informers
 * through `deps.informers` and returns the reconciler and its watches; it must not start anything
 * or call the API: main starts informers, waits for sync, and runs the loop only while leading.
 */
export interface ControllerRegistration {
  /** kebab-case, e.g. `couch-instance`; the `controller` label of logs and metrics. */
  name: string;
  create(deps: ControllerDeps): ControllerDefinition;
}
