import { Command, type Redis } from 'ioredis';

/** A script's key or argument, as ioredis takes them: numbers are sent as their decimal text. */
export type ScriptArgument = string | number | Buffer;

/**
 * One script call, `EVALSHA sha n keys... args...` (or `EVAL lua n ...`), as the bytes Redis reads:
 * a RESP array of bulk strings in one buffer, each string measured once and written once, the
 * headers' digits written in JavaScript. ioredis's own encoder measures each string three times,
 * writes it through a list of pieces and formats each header as a string of its own: for a
 * publish's call (7 keys, 8 arguments) 7.7 µs against 2.4 in isolation (docs/queue.md, Performance).
 */
export function encodeScriptCall(
  command: 'evalsha' | 'eval',
  script: string,
  keys: readonly string[],
  args: readonly ScriptArgument[],
): Buffer {
  const count = 2 + keys.length + args.length;
  const head = encodedHead(script, keys);
  const texts: (string | Buffer)[] = new Array<string | Buffer>(args.length);
  const lengths: number[] = new Array<number>(args.length);
  let size =
    1 + digitsOf(count + 1) + 2 + 1 + digitsOf(command.length) + 2 + command.length + 2 + head.length;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const text = typeof arg === 'number' ? numberText(arg) : arg;
    const length = typeof text === 'string' ? Buffer.byteLength(text) : text.length;
    texts[i] = text;
    lengths[i] = length;
    // `$<length>\r\n<bytes>\r\n`
    size += 1 + digitsOf(length) + 2 + length + 2;
  }
  const bytes = Buffer.allocUnsafe(size);
  let at = writeHeader(bytes, 0, 0x2a, count + 1); // '*'
  at = writeHeader(bytes, at, 0x24, command.length); // '$'
  at += bytes.write(command, at, 'latin1');
  bytes[at++] = 0x0d;
  bytes[at++] = 0x0a;
  at += head.copy(bytes, at);
  for (let i = 0; i < args.length; i++) at = writeBulk(bytes, at, texts[i]!, lengths[i]!);
  return bytes;
}

/** The last head each script was called with (a script's calls name the same keys, call after call). */
const heads = new Map<string, { keys: readonly string[]; bytes: Buffer }>();

/**
 * The script (its sha, or its Lua for EVAL), the key count and the keys as bulk strings: the same
 * for every call of a script on one binding, so encoded once and copied, where measuring and
 * writing its nine strings for a publish was a native call each (docs/queue.md, Performance).
 * One head per script is kept, the last one used, compared key by key (the same string objects,
 * from keys.ts, compare at once).
 */
function encodedHead(script: string, keys: readonly string[]): Buffer {
  const last = heads.get(script);
  if (last !== undefined && sameKeys(last.keys, keys)) return last.bytes;
  const texts = [script, String(keys.length), ...keys];
  const lengths = texts.map((text) => Buffer.byteLength(text));
  let size = 0;
  for (const length of lengths) size += 1 + digitsOf(length) + 2 + length + 2;
  const bytes = Buffer.alloc(size);
  let at = 0;
  for (let i = 0; i < texts.length; i++) at = writeBulk(bytes, at, texts[i]!, lengths[i]!);
  heads.set(script, { keys: [...keys], bytes });
  return bytes;
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** `$<length>\r\n<bytes>\r\n` at `at`, `length` being the text's UTF-8 length; returns the offset after it. */
function writeBulk(bytes: Buffer, at: number, text: string | Buffer, length: number): number {
  at = writeHeader(bytes, at, 0x24, length);
  if (typeof text !== 'string') at += text.copy(bytes, at);
  else at += bytes.write(text, at, length, 'utf8');
  bytes[at++] = 0x0d;
  bytes[at++] = 0x0a;
  return at;
}

/** A number as ioredis sends it: its decimal text, an integer beyond 2^53 in all its digits. */
function numberText(n: number): string {
  return Number.isInteger(n) && !Number.isSafeInteger(n) ? BigInt(n).toString() : String(n);
}

/** `<mark><n>\r\n` (a RESP array's or bulk string's header) at `at`; returns the offset after it. */
function writeHeader(bytes: Buffer, at: number, mark: number, n: number): number {
  bytes[at++] = mark;
  const end = at + digitsOf(n);
  for (let i = end - 1; i >= at; i--) {
    bytes[i] = 0x30 + (n % 10);
    n = Math.floor(n / 10);
  }
  bytes[end] = 0x0d;
  bytes[end + 1] = 0x0a;
  return end + 2;
}

function digitsOf(n: number): number {
  let digits = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    digits += 1;
  }
  return digits;
}

/**
 * A script call for ioredis to send as it sends any command (command timeout, offline queue,
 * replies matched in order, resent after a reconnect) with its bytes already encoded. `args` holds
 * the call's arguments as ioredis would (script, key count, keys, arguments) for its error
 * messages and key lookups; they are not encoded again.
 */
export class ScriptCommand extends Command {
  constructor(
    name: 'evalsha' | 'eval',
    private readonly bytes: Buffer,
    args: ScriptArgument[],
    replyEncoding: 'utf8' | null,
  ) {
    super(name, [], { replyEncoding });
    this.args = args;
  }

  override toWritable(): Buffer {
    return this.bytes;
  }
}

/** The connections' sockets held corked until the event loop's check phase. */
const corked = new WeakSet<object>();

/**
 * Sends `command` on `redis`. The calls made in one pass of the event loop (publishes whose
 * requests arrived together) leave in one socket write, as ioredis's auto-pipelining sends them:
 * the socket is corked at the first and uncorked on setImmediate, after the pass's I/O callbacks,
 * so a lone call waits for no timer.
 */
export function sendScriptCommand(redis: Redis, command: ScriptCommand): Promise<unknown> {
  const socket = redis.stream as Redis['stream'] | undefined;
  if (redis.status === 'ready' && socket !== undefined && !corked.has(socket)) {
    corked.add(socket);
    socket.cork();
    setImmediate(() => {
      corked.delete(socket);
      socket.uncork();
    });
  }
  return redis.sendCommand(command) as Promise<unknown>;
}
