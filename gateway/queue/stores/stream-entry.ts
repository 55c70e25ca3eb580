import type { Redis } from 'ioredis';
import { MESSAGE_FIELD } from '../core/keys.js';

/** A stream entry handed to a consumer: its id, and the stored message (undefined if deleted meanwhile). */
export interface StreamEntry {
  entryId: string;
  stored: Buffer | undefined;
}

export type RawEntry = [Buffer, Buffer[] | null];

/**
 * The binary-reply forms of the stream reads: message bodies are bytes, so they must not be
 * decoded as UTF-8. (ioredis's generic callBuffer mangles its arguments on an auto-pipelined
 * connection, which the shared command connection is; these generated methods do not.)
 */
interface BufferStreamCommands {
  xreadgroupBuffer(...args: (string | number)[]): Promise<[Buffer, RawEntry[]][] | null>;
  xautoclaimBuffer(...args: (string | number)[]): Promise<[Buffer, RawEntry[], Buffer[]?]>;
}

export function bufferCommands(redis: Redis): BufferStreamCommands {
  return redis as unknown as BufferStreamCommands;
}

export function toEntries(raw: readonly (RawEntry | null)[] | null | undefined): StreamEntry[] {
  // XCLAIM answers null for an entry deleted meanwhile (before Redis 7 dropped those from the reply).
  return (raw ?? [])
    .filter((entry): entry is RawEntry => entry !== null)
    .map(([id, fields]) => {
      let stored: Buffer | undefined;
      for (let i = 0; fields && i + 1 < fields.length; i += 2) {
        if (fields[i]!.toString() === MESSAGE_FIELD) stored = fields[i + 1];
      }
      return { entryId: id.toString(), stored };
    });
}

export function isBusyGroup(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('BUSYGROUP');
}

export function isNoGroup(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOGROUP');
}
