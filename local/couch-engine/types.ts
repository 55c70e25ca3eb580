import type { ManagedProcess, StartProcessOptions } from '../process.js';

/** The two engines behind {@link CouchEngine}: the npm stand-in, or a real Apache CouchDB 3.x install. */
export type CouchEngineKind = 'pouchdb-server' | 'apache-couchdb';

export interface CouchEngineAdmin {
  username: string;
  password: string;
}

export interface CouchEngineOptions {
  /** Where the databases live; kept across stops so a restart on it finds the same data. */
  dataDir: string;
  /** The server admin. There is never an admin party: requests without credentials are not admins. */
  admin: CouchEngineAdmin;
  /** Listen on this loopback port (default: a free one, retried if taken meanwhile). */
  port?: number;
  /**
   * Listen on this loopback address (default 127.0.0.1). The kubelet stand-in gives each pod an
   * address of its own in 127.0.0.0/8, so every engine listens on the template's own port.
   */
  host?: string;
  /** The server uuid reported by GET / (default: one generated once and kept in dataDir). */
  uuid?: string;
  /** A label for process names and logs (default: the port). */
  name?: string;
  /**
   * Called once the engine's process is spawned, before it serves: the moment a container runtime
   * reports the container started (the kubelet stand-in records its pid and the Started Event then).
   */
  onStarted?: (pid: number) => void;
  /**
   * How the engine's process is started (default: startProcess, a spawn). The kubelet stand-in
   * hands its ProcessLauncher's, which execs a process forked ahead of the start.
   */
  startProcess?: ((options: StartProcessOptions) => ManagedProcess) | undefined;
  /**
   * false: resolve once the process is spawned, as a container runtime reports a container started,
   * without asking /_up meanwhile; whoever started it probes it on its own schedule (the kubelet
   * stand-in's probe loop). Default true: resolve once /_up answers.
   */
  waitUntilUp?: boolean;
}

/** A CouchDB-compatible server on a loopback address, answering GET /_up. */
export interface CouchEngine {
  kind: CouchEngineKind;
  /** http://<host>:<port>, without credentials. */
  url: string;
  host: string;
  port: number;
  uuid: string;
  pid: number;
  /** Resolves with the exit code (or signal name) when the engine process ends. */
  exited: Promise<number | string>;
  /** The last lines of the engine's output, for diagnosis. */
  output(): string;
  /** Stops the engine, SIGKILL after `graceMs` (its data stays in dataDir). Safe to call twice. */
  stop(graceMs?: number): Promise<void>;
}
