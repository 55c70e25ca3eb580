/** The requested engine cannot run here (a missing or incomplete CouchDB install, for instance). */
export class CouchEngineUnavailableError extends Error {
  readonly code = 'COUCH_ENGINE_UNAVAILABLE';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CouchEngineUnavailableError';
  }
}

/** An option cannot be expressed in the engine's configuration (a newline in an ini value, for instance). */
export class InvalidCouchEngineConfigError extends Error {
  readonly code = 'INVALID_COUCH_ENGINE_CONFIG';

  constructor(message: string) {
    super(message);
    this.name = 'InvalidCouchEngineConfigError';
  }
}

/** The Fauxton release the pouchdb stand-in serves at /_utils has not been fetched into the cache. */
export class FauxtonReleaseMissingError extends Error {
  readonly code = 'FAUXTON_RELEASE_MISSING';

  constructor(
    readonly cacheDir: string,
    readonly fetchCommand: string,
  ) {
    super(
      `Fauxton (served by the pouchdb stand-in at /_utils) is not in ${cacheDir}: fetch it once with \`${fetchCommand}\` (\`make deps\` runs it)`,
    );
    this.name = 'FauxtonReleaseMissingError';
  }
}

/** The container's entrypoint refused to start CouchDB (the official image's exit 1, with its message). */
export class ContainerExitedError extends Error {
  readonly code = 'CONTAINER_EXITED';

  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'ContainerExitedError';
  }
}
