/**
 * What a set-up wait through the gateway prints when it gives up. "fetch failed" alone (undici's
 * TypeError) says nothing of why: a run once timed out that way waiting for tenant B's queue after
 * A's instance and queue and B's instance had answered through the same gateway, and did not do so
 * again in four reruns. So the wait keeps its last answer or error, and the failure names the
 * error's cause chain (code, syscall, address and port), whether the gateway had exited and its
 * last lines, and whether B's Redis answers a PING of its own, bypassing the gateway.
 */
import { Redis } from 'ioredis';
import type { ManagedProcess } from '../../local/process.js';
import { waitFor } from '../../local/wait.js';

const GATEWAY_LINES = 50;
const PING_TIMEOUT_MS = 2_000;

/** What an attempt got: an answer's status and the start of its body, or the error thrown. */
type Attempt = { status: number; body: string } | { error: unknown };
interface RedisAddress {
  host: string;
  port: number;
  password: string;
}

/**
 * Polls `url` through the gateway until it answers `expected` (any 2xx when omitted); on a timeout
 * or the gateway's exit, throws with the diagnosis appended.
 */
export async function waitThroughGateway(options: {
  what: string;
  url: string;
  init: () => RequestInit;
  expected?: number;
  timeoutMs: number;
  gateway: ManagedProcess;
  /** The tenant's Redis, PINGed directly when the wait fails (its queue's wait). */
  redis?: RedisAddress;
}): Promise<void> {
  let last: Attempt | undefined;
  const answered = (status: number) =>
    options.expected === undefined ? status >= 200 && status < 300 : status === options.expected;
  try {
    await waitFor(
      options.what,
      async () => {
        last = await attempt(options.url, options.init());
        return 'status' in last && answered(last.status) ? true : undefined;
      },
      { timeoutMs: options.timeoutMs, intervalMs: 200, abort: options.gateway.exited },
    );
  } catch (err) {
    const diagnosis = await diagnose({
      what: options.what,
      last,
      gateway: options.gateway,
      redis: options.redis,
    });
    throw new Error(`${(err as Error).message}\n${diagnosis}`, { cause: err });
  }
}

/** A fetch that never throws: its answer or error, kept for the diagnosis. */
async function attempt(url: string, init: RequestInit): Promise<Attempt> {
  try {
    const response = await fetch(url, init);
    return { status: response.status, body: (await response.text()).slice(0, 300) };
  } catch (error) {
    return { error };
  }
}

/** An error and its causes, one line each, with the fields a socket error carries. */
export function describeErrorChain(error: unknown): string {
  const lines: string[] = [];
  for (let at = error, depth = 0; at !== undefined && depth < 8; depth++) {
    if (!(at instanceof Error)) {
      lines.push(`${'  '.repeat(depth)}${String(at)}`);
      break;
    }
    const fields = at as Error & Partial<Record<'code' | 'syscall' | 'address' | 'port' | 'errno', unknown>>;
    const details = (['code', 'syscall', 'address', 'port', 'errno'] as const)
      .filter((key) => fields[key] !== undefined)
      .map((key) => `${key}=${String(fields[key])}`);
    lines.push(
      `${'  '.repeat(depth)}${at.name}: ${at.message}${details.length ? ` (${details.join(' ')})` : ''}`,
    );
    at = at.cause;
  }
  return lines.join('\n');
}

/** The process's exit code or signal if it has ended, else 'running'. */
async function exitState(proc: ManagedProcess): Promise<string> {
  const state = await Promise.race([
    proc.exited,
    new Promise<string>((resolve) => setImmediate(resolve, 'running')),
  ]);
  return state === 'running' ? 'running' : `exited (${state})`;
}

/** Whether a Redis answers an authenticated PING directly: 'PONG', or the error. */
async function pingDirectly(redis: RedisAddress): Promise<string> {
  const client = new Redis({
    ...redis,
    lazyConnect: true,
    connectTimeout: PING_TIMEOUT_MS,
    commandTimeout: PING_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await client.ping();
  } catch (error) {
    return `no answer: ${describeErrorChain(error)}`;
  } finally {
    client.disconnect();
  }
}

async function diagnose(options: {
  what: string;
  last: Attempt | undefined;
  gateway: ManagedProcess;
  redis: RedisAddress | undefined;
}): Promise<string> {
  const { last, gateway, redis } = options;
  const lastLine =
    last === undefined
      ? 'no attempt finished'
      : 'error' in last
        ? `failed:\n${describeErrorChain(last.error)}`
        : `answered ${last.status}: ${last.body}`;
  const output = gateway.output().split('\n').slice(-GATEWAY_LINES).join('\n');
  return [
    `while waiting for ${options.what}, the last attempt ${lastLine}`,
    `the gateway (pid ${gateway.pid}) is ${await exitState(gateway)}; its last ${GATEWAY_LINES} lines:`,
    output,
    ...(redis
      ? [`the tenant's Redis at ${redis.host}:${redis.port}, PINGed directly: ${await pingDirectly(redis)}`]
      : []),
  ].join('\n');
}
