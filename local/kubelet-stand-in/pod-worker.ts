import {
  PatchStrategy,
  setHeaderOptions,
  type CoreV1Api,
  type V1Container,
  type V1ContainerStateTerminated,
  type V1Pod,
} from '@kubernetes/client-node';
import type { Logger } from 'winston';
import { COUCHDB_PORT } from '../../api/contract.js';
import { callKube, isNotFound } from '../../kube/errors.js';
import type { EventRecord, EventRecorder } from '../../kube/events.js';
import { InterruptibleSleep } from '../../kube/controller-runtime/interruptible-sleep.js';
import { errorMessage } from '../../observability/logger.js';
import type { ManagedProcess, StartProcessOptions } from '../process.js';
import {
  CouchEngineUnavailableError,
  locateCouchDbRelease,
  startApacheCouchDbEngine,
  startCouchEngine,
  type CouchEngine,
  type CouchEngineKind,
} from '../couch-engine/index.js';
import { claimVolumeForEngine, ENGINE_DATA_MISMATCH_REASON } from './engine-data-kind.js';
import { MissingEngineInputError, type EngineInputs } from './engine-inputs.js';
import { allocatePodAddress, isPodLoopbackAddress } from './loopback-address.js';
import { buildPodStatus, type ContainerPhase } from './pod-status.js';
import { probeUntilEnd, type RunEnd } from './probe-loop.js';
import { CrashLoopBackOff } from './restart-backoff.js';
import { killLeftoverEngine, recordEnginePid } from './engine-pid-file.js';
import { canRunLocally, IMAGE_NOT_RUNNABLE_REASON, imageNotRunnableMessage } from './runnable-image.js';

export interface PodWorkerDeps {
  core: CoreV1Api;
  events: EventRecorder;
  logger: Logger;
  /** Which engine runs the pod's container (engine-kind-for.ts). */
  engineKind(pod: V1Pod): CouchEngineKind;
  /** What the engine is handed; throws MissingEngineInputError while a reference is missing. */
  engineInputs(pod: V1Pod, kind: CouchEngineKind): EngineInputs;
  /** The folder holding the pod's data volume, or why it is not there yet. */
  dataFolder(pod: V1Pod): Promise<{ folder: string; claim?: string } | { waiting: string }>;
  /** Loopback addresses in use by this stand-in's pods. */
  addresses: Set<string>;
  /** Restart delays after a container ends (the kubelet's: 10 s doubling to 5 min). */
  restartBackoff?: { baseMs: number; maxMs: number };
  /** How the engine's process is started (the stand-in's ProcessLauncher: no fork on the start's path). */
  startProcess?: (options: StartProcessOptions) => ManagedProcess;
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const WAIT_RETRY_MS = 1_000;

/**
 * LOCAL PLATFORM AND TESTS ONLY: what the kubelet's pod worker does for one pod of one CouchDB
 * container, with the container run as a local engine process on the pod's own loopback address:
 * start it, report status as a kubelet does, run its startup, readiness and liveness probes on the
 * kubelet's schedule, restart it by the pod's restart policy with CrashLoopBackOff, and stop it
 * within the pod's termination grace period.
 */
export class PodWorker {
  readonly uid: string;
  private pod: V1Pod;
  private engine: CouchEngine | undefined;
  private stopping = false;
  private readonly waits = new InterruptibleSleep();
  private loop: Promise<void> | undefined;
  private podIP: string | undefined;
  private restartCount: number;
  private lastTermination: V1ContainerStateTerminated | undefined;
  private readonly startTime = new Date();
  private lastReport = '';

  constructor(
    pod: V1Pod,
    private readonly deps: PodWorkerDeps,
  ) {
    this.pod = pod;
    this.uid = pod.metadata?.uid ?? '';
    // A stand-in that restarts finds its pods again, and keeps their addresses.
    const previousIP = pod.status?.podIP;
    this.podIP = isPodLoopbackAddress(previousIP) ? previousIP : undefined;
    if (this.podIP) deps.addresses.add(this.podIP);
    this.restartCount = pod.status?.containerStatuses?.[0]?.restartCount ?? 0;
  }

  update(pod: V1Pod): void {
    this.pod = pod;
  }

  start(): void {
    this.loop = this.run().catch((err: unknown) => {
      this.deps.logger.error('pod worker failed', { pod: this.describe(), error: errorMessage(err) });
    });
  }

  /** Stops the container within `graceMs` (SIGTERM, then SIGKILL) and ends the worker. */
  async terminate(graceMs: number): Promise<void> {
    this.stopping = true;
    this.waits.interrupt();
    const engine = this.engine;
    if (engine) {
      await this.event({
        type: 'Normal',
        reason: 'Killing',
        message: `Stopping container ${this.containerName()}`,
      });
      await engine.stop(graceMs);
    }
    await this.loop;
    if (this.podIP) this.deps.addresses.delete(this.podIP);
  }

  private async run(): Promise<void> {
    if (!canRunLocally(this.pod)) {
      const message = imageNotRunnableMessage(this.pod);
      await this.report({ kind: 'waiting', reason: IMAGE_NOT_RUNNABLE_REASON, message });
      await this.event({ type: 'Warning', reason: 'Failed', message });
      return;
    }
    const container = this.pod.spec?.containers[0] as V1Container;
    const port = container.ports?.find((p) => (p.protocol ?? 'TCP') === 'TCP')?.containerPort ?? COUCHDB_PORT;
    const backoff = new CrashLoopBackOff(this.deps.restartBackoff);
    while (!this.stopping) {
      const prepared = await this.prepare();
      if ('waiting' in prepared) {
        await this.report({ kind: 'waiting', ...prepared.waiting });
        await this.waits.sleep(WAIT_RETRY_MS);
        continue;
      }
      this.podIP ??= await allocatePodAddress(port, this.deps.addresses);
      this.deps.addresses.add(this.podIP);
      const startedAt = new Date();
      const end = await this.runOnce(container, port, startedAt, prepared);
      if (this.stopping) return;
      this.lastTermination = { ...end, startedAt };
      const policy = this.pod.spec?.restartPolicy ?? 'Always';
      if (policy === 'Never' || (policy === 'OnFailure' && end.exitCode === 0)) {
        await this.report({ kind: 'terminated', ...end, startedAt });
        return;
      }
      this.restartCount += 1;
      const finishedAt = end.finishedAt.getTime();
      if (backoff.remainingMs(finishedAt, Date.now()) > 0) {
        const message = `back-off ${Math.round(backoff.delayMs(finishedAt) / 1000)}s restarting failed container=${container.name} pod=${this.describe()}`;
        await this.report({ kind: 'waiting', reason: 'CrashLoopBackOff', message });
        await this.event({
          type: 'Warning',
          reason: 'BackOff',
          message: 'Back-off restarting failed container',
        });
        // Counted from the exit, as the kubelet's: the report and the Event above took part of it.
        await this.waits.sleep(backoff.remainingMs(finishedAt, Date.now()));
        if (this.stopping) return;
      }
      backoff.restarted(finishedAt, Date.now());
    }
  }

  /** The engine's inputs and data folder, or the waiting reason a kubelet would show meanwhile. */
  private async prepare(): Promise<
    { inputs: EngineInputs; folder: string } | { waiting: { reason: string; message: string } }
  > {
    let inputs: EngineInputs;
    const kind = this.deps.engineKind(this.pod);
    try {
      inputs = this.deps.engineInputs(this.pod, kind);
    } catch (err) {
      if (!(err instanceof MissingEngineInputError)) throw err;
      return { waiting: { reason: 'CreateContainerConfigError', message: err.message } };
    }
    const data = await this.deps.dataFolder(this.pod);
    if ('waiting' in data) return { waiting: { reason: 'ContainerCreating', message: data.waiting } };
    const mismatch = claimVolumeForEngine({
      folder: data.folder,
      kind,
      claim: data.claim ?? this.describe(),
    });
    if (mismatch !== undefined)
      return { waiting: { reason: ENGINE_DATA_MISMATCH_REASON, message: mismatch } };
    return { inputs, folder: data.folder };
  }

  /** One run of the container: start, probe until it ends (or fails its liveness probe). */
  private async runOnce(
    container: V1Container,
    port: number,
    startedAt: Date,
    prepared: { inputs: EngineInputs; folder: string },
  ): Promise<RunEnd> {
    let engine: CouchEngine | undefined;
    // As a kubelet does once the runtime has started the container, not once it serves: the
    // runtime's record (the pid file, with the start time), Running (not started, not ready) while
    // the engine boots, so the pod has its IP from now on, and the Started Event. Not before the
    // spawn: the status patch's request would take the event loop the spawn waits for.
    let reported: Promise<void> = Promise.resolve();
    let spawned: Promise<void> = Promise.resolve();
    const onStarted = (pid: number): void => {
      const spawnedAtMs = performance.timeOrigin + performance.now();
      spawned = (async () => {
        recordEnginePid(prepared.folder, pid, spawnedAtMs);
        await this.event({
          type: 'Normal',
          reason: 'Started',
          message: `Started container ${container.name}`,
        });
      })();
      reported = this.report({ kind: 'running', startedAt, started: false, ready: false });
      // Awaited right after the start returns (or fails): a failure meanwhile is not an unhandled rejection.
      spawned.catch(() => undefined);
    };
    try {
      if (await killLeftoverEngine(prepared.folder))
        this.deps.logger.warn('killed the engine a stand-in killed before left running', {
          pod: this.describe(),
        });
      engine = await this.startEngine(container, port, prepared, onStarted);
      await spawned;
    } catch (err) {
      // The container ended now: the back-off is counted from here, not after the API calls below.
      const finishedAt = new Date();
      // An engine that started but whose record failed (disk full, volume folder gone) is stopped,
      // not kept: the next run starts another on the same data, and a stand-in started after this
      // one was killed could not find it to end it. Either way two engines would share the volume.
      await Promise.all([reported, spawned.catch(() => undefined), engine?.stop()]);
      this.deps.logger.warn('container failed to start', { pod: this.describe(), error: errorMessage(err) });
      await this.event({
        type: 'Warning',
        reason: 'Failed',
        message: `Error: ${errorMessage(err).split('\n')[0]}`,
      });
      return { exitCode: 1, reason: 'Error', finishedAt };
    }
    await reported;
    this.engine = engine;
    if (this.stopping) await engine.stop();
    try {
      const end = await probeUntilEnd({
        worker: {
          waits: this.waits,
          isStopping: () => this.stopping,
          report: (phase) => this.report(phase),
          event: (record) => this.event(record),
          containerName: this.containerName(),
          graceMs: (this.pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000,
        },
        engine,
        container,
        startedAt,
        podIP: this.podIP ?? '',
      });
      // What `kubectl logs --previous` would show: an engine that ends during its boot is no longer a
      // failed start with its output in the error (startEngine resolves at the spawn).
      if (end.exitCode !== 0 && !this.stopping)
        this.deps.logger.warn('container exited', {
          pod: this.describe(),
          exitCode: end.exitCode,
          output: engine.output(),
        });
      return end;
    } finally {
      this.engine = undefined;
    }
  }

  /**
   * Resolves once the engine's process is spawned, as a container runtime's start does, when a
   * startup or readiness probe will say when it serves: the probe loop asks it on the pod's
   * schedule, as a kubelet's probe workers do, where the stand-in used to poll its /_up every 10 ms
   * meanwhile (CPU taken from the cores it boots on; docs/cold-start.md). A container with neither
   * is Ready at its start in a kubelet; here it is still Ready once its engine answers, as the
   * stand-in's tests' pods (which have no probes) rely on.
   */
  private async startEngine(
    container: V1Container,
    port: number,
    prepared: { inputs: EngineInputs; folder: string },
    onStarted: (pid: number) => void,
  ): Promise<CouchEngine> {
    const { inputs, folder } = prepared;
    const waitUntilUp = !container.startupProbe && !container.readinessProbe;
    const podIP = this.podIP ?? '';
    if (inputs.kind === 'pouchdb-server') {
      return startCouchEngine({
        kind: 'pouchdb-server',
        host: podIP,
        port,
        dataDir: folder,
        admin: inputs.admin,
        uuid: inputs.uuid,
        name: this.describe(),
        onStarted,
        startProcess: this.deps.startProcess,
        waitUntilUp,
      });
    }
    const release = locateCouchDbRelease();
    if (!release) throw new CouchEngineUnavailableError('no Apache CouchDB release is available any more');
    return startApacheCouchDbEngine({
      release,
      dataDir: folder,
      network: { kind: 'pod', podIP, containerPort: port },
      container: inputs.container,
      name: this.describe(),
      onStarted,
      startProcess: this.deps.startProcess,
      waitUntilUp,
    });
  }

  private async report(container: ContainerPhase): Promise<void> {
    const key = JSON.stringify([container, this.podIP, this.restartCount]);
    if (key === this.lastReport || this.stopping) return;
    this.lastReport = key;
    const status = buildPodStatus({
      pod: this.pod,
      podIP: this.podIP,
      container,
      restartCount: this.restartCount,
      ...(this.lastTermination ? { lastTermination: this.lastTermination } : {}),
      startTime: this.startTime,
      now: new Date(),
    });
    const { namespace = '', name = '' } = this.pod.metadata ?? {};
    try {
      await callKube(() =>
        this.deps.core.patchNamespacedPodStatus({ namespace, name, body: { status } }, mergePatch),
      );
    } catch (err) {
      this.lastReport = '';
      if (!isNotFound(err))
        this.deps.logger.warn('pod status update failed', { pod: this.describe(), error: errorMessage(err) });
    }
  }

  private event(record: EventRecord): Promise<void> {
    return this.deps.events.record({ apiVersion: 'v1', kind: 'Pod', metadata: this.pod.metadata }, record);
  }

  private containerName(): string {
    return this.pod.spec?.containers[0]?.name ?? '';
  }

  private describe(): string {
    return `${this.pod.metadata?.namespace ?? ''}/${this.pod.metadata?.name ?? ''}`;
  }
}
