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
