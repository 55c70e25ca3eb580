import { DomainError } from '../domain-error.js';
import type { InstanceRef } from '../instance-ref.js';

/**
 * What can go wrong on an instance request, as classes with a `code`. They become HTTP answers in
 * exactly one place (error-response.ts); nothing else picks a status for them.
 */
export type GatewayErrorCode =
  | 'MALFORMED_HOST'
  | 'MALFORMED_INSTANCE_PATH'
  | 'MALFORMED_CREDENTIALS'
  | 'UNKNOWN_INSTANCE'
  | 'INSTANCE_DELETING'
  | 'UPSTREAM_FAILED'
  | 'UPSTREAM_TIMEOUT'
  | 'WAKE_TIMEOUT'
  | 'INSTANCE_UNSCHEDULABLE'
  | 'HOLD_QUEUE_FULL'
  | 'SHUTTING_DOWN'
  | 'CLIENT_BODY_TIMEOUT'
  | 'METHOD_NOT_ALLOWED'
  | 'RATE_LIMITED'
  | 'INSTANCE_BUSY'
  | 'STORAGE_LIMIT'
  | 'DATABASE_LIMIT';

export abstract class GatewayError extends DomainError<GatewayErrorCode> {}

/** The most of a client's own input (a path, a Host) an error message repeats back. */
const ECHO_LIMIT = 200;

/**
 * `text` cut to ECHO_LIMIT characters, for error messages that quote what the client sent: a 15 KB
 * path would otherwise come back whole in the answer and go whole into the log.
 */
export function truncateForEcho(text: string): string {
  return text.length > ECHO_LIMIT ? `${text.slice(0, ECHO_LIMIT)}...` : text;
}

export class MalformedHostError extends GatewayError {
  readonly code = 'MALFORMED_HOST';
  /**
   * `problem` completes the sentence about the host; the usual one is that it names no instance,
   * others are a repeated Host header or the host of an absolute-form request target.
   */
  constructor(
    readonly host: string,
    problem = 'does not name an instance as <name>.<namespace>.<domain>',
  ) {
    super(`the Host header ${JSON.stringify(truncateForEcho(host))} ${problem}`);
  }
}

export class MalformedInstancePathError extends GatewayError {
  readonly code = 'MALFORMED_INSTANCE_PATH';
  constructor(readonly path: string) {
    super(
      `the path ${JSON.stringify(truncateForEcho(path))} does not name an instance as /db/<namespace>/<name>/`,
    );
  }
}

/** A Basic Authorization header whose value is not base64 (isUndecodableBasicCredential). */
export class MalformedCredentialsError extends GatewayError {
  readonly code = 'MALFORMED_CREDENTIALS';
  constructor() {
    super('the Authorization header is Basic but its credentials are not base64 of <name>:<password>');
  }
}

export class UnknownInstanceError extends GatewayError {
  readonly code = 'UNKNOWN_INSTANCE';
  constructor(readonly instance: InstanceRef) {
    super(`there is no instance ${instance.namespace}/${instance.name}`);
  }
}

export class InstanceDeletingError extends GatewayError {
  readonly code = 'INSTANCE_DELETING';
  constructor(readonly instance: InstanceRef) {
    super(`the instance ${instance.namespace}/${instance.name} is being deleted`);
  }
}

/** The instance's CouchDB could not be reached, or broke off before it answered. */
export class UpstreamError extends GatewayError {
  readonly code = 'UPSTREAM_FAILED';
  constructor(
    readonly instance: InstanceRef,
    cause: unknown,
  ) {
    const detail =
      (cause as NodeJS.ErrnoException | undefined)?.code ?? (cause as Error | undefined)?.message;
    super(
      `the instance ${instance.namespace}/${instance.name} did not answer (${detail ?? 'unknown error'})`,
      { cause },
    );
  }
}

/**
 * The instance accepted the request but did not start its response in time
 * (SETTEE_GATEWAY_UPSTREAM_HEADERS_TIMEOUT): a hung CouchDB.
 */
export class UpstreamTimeoutError extends GatewayError {
  readonly code = 'UPSTREAM_TIMEOUT';
  constructor(
    readonly instance: InstanceRef,
    readonly timeoutMs: number,
    cause?: unknown,
  ) {
    super(
      `the instance ${instance.namespace}/${instance.name} did not start its response within ${timeoutMs} ms`,
      { cause },
    );
  }
}

export class WakeTimeoutError extends GatewayError {
  readonly code = 'WAKE_TIMEOUT';
  constructor(
    readonly instance: InstanceRef,
    readonly waitedMs: number,
  ) {
    super(`the instance ${instance.namespace}/${instance.name} was not up within ${waitedMs} ms`);
  }
}

/**
 * The scheduler finds no node for the instance's pod (region pinning to a region no node has, or
 * not enough resources): waiting for the wake timeout would not change that, so it is said at once.
 */
export class InstanceUnschedulableError extends GatewayError {
  readonly code = 'INSTANCE_UNSCHEDULABLE';
  constructor(
    readonly instance: InstanceRef,
    readonly schedulerMessage: string,
  ) {
    super(
      `the instance ${instance.namespace}/${instance.name} cannot be started: its pod cannot be scheduled: ${schedulerMessage}`,
    );
  }
}

/** An instance already has SETTEE_GATEWAY_MAX_INSTANCE_REQUESTS requests in flight on this replica. */
export class InstanceBusyError extends GatewayError {
  readonly code = 'INSTANCE_BUSY';
  constructor(
    readonly instance: InstanceRef,
    readonly limit: number,
  ) {
    super(
      `the instance ${instance.namespace}/${instance.name} already has ${limit} requests in flight on this gateway; retry shortly`,
    );
  }
}

export class HoldQueueFullError extends GatewayError {
  readonly code = 'HOLD_QUEUE_FULL';
  constructor(
    readonly instance: InstanceRef,
    readonly limit: number,
  ) {
    super(
      `the instance ${instance.namespace}/${instance.name} is starting and ${limit} requests already wait for it`,
    );
  }
}

/**
 * A client sent part of a request body and then nothing for the client idle timeout
 * (SETTEE_GATEWAY_CLIENT_IDLE_TIMEOUT): it would otherwise hold its connection, and the upstream
 * request the body streams into, for as long as it likes.
 */
export class ClientBodyTimeoutError extends GatewayError {
  readonly code = 'CLIENT_BODY_TIMEOUT';
  constructor(readonly timeoutMs: number) {
    super(`the request body stopped arriving for ${timeoutMs} ms`);
  }
}

/** CONNECT: the gateway is no tunnelling proxy. */
export class MethodNotAllowedError extends GatewayError {
  readonly code = 'METHOD_NOT_ALLOWED';
  constructor(readonly method: string) {
    super(`the gateway does not serve ${truncateForEcho(method)} requests`);
  }
}

export class ShuttingDownError extends GatewayError {
  readonly code = 'SHUTTING_DOWN';
  constructor() {
    super('the gateway is shutting down');
  }
}

/** A free instance's requests of one class came faster than the free envelope's rate. */
export class RateLimitedError extends GatewayError {
  readonly code = 'RATE_LIMITED';
  constructor(
    readonly instance: InstanceRef,
    readonly requestClass: string,
    readonly ratePerSecond: number,
    /** When a request of this class would pass again: the answer's Retry-After. */
    readonly retryAfterSeconds: number,
  ) {
    super(
      `the instance ${instance.namespace}/${instance.name} is on the free plan, limited to ${ratePerSecond} ` +
        `${requestClass} requests per second; retry after ${retryAfterSeconds} s, or move it to plan: paid`,
    );
  }
}

/** A free instance holds more data than the free envelope allows: writes that add data are refused. */
export class StorageLimitError extends GatewayError {
  readonly code = 'STORAGE_LIMIT';
  constructor(
    readonly instance: InstanceRef,
    readonly limit: string,
    readonly usedBytes: number,
  ) {
    super(
      `the instance ${instance.namespace}/${instance.name} holds ${usedBytes} bytes, above the free plan's ` +
        `storage limit of ${limit}; reads, deletes and compaction still work, writes resume once it is ` +
        'under the limit again (or move it to plan: paid)',
    );
  }
}

/** A free instance already holds the free envelope's number of databases. */
export class DatabaseLimitError extends GatewayError {
  readonly code = 'DATABASE_LIMIT';
  constructor(
    readonly instance: InstanceRef,
    readonly limit: number,
  ) {
    super(
      `the instance ${instance.namespace}/${instance.name} is on the free plan, limited to ${limit} ` +
        'databases; delete one first, or move it to plan: paid',
    );
  }
}
