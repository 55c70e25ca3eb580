/**
 * The base of the gateway's domain errors: a machine-readable `code`, the class's own name as
 * `name` (so logs and stack traces say which error it was), and the `cause` it wraps, if any.
 * Each surface maps its subclasses to its own HTTP answers: error-response.ts for instance
 * requests, gateway/queue/core/errors.ts for the QStash API.
 */
export abstract class DomainError<Code extends string> extends Error {
  abstract readonly code: Code;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}
