import fs from 'node:fs';

/**
 * How large a child's log file grows before it is rotated. A persistent one (redis.log beside a
 * queue database's data, the components' logs in make run's state folder) is appended to by every
 * restart and every run on the same folder: without a bound it grows for ever.
 */
export const LOG_FILE_MAX_BYTES = 8 * 1024 * 1024;

/** Where a child's output is appended (ManagedProcess's logFile). */
export interface LogFile {
  write(chunk: Buffer): void;
  end(): void;
}

/**
 * Opens `file` for appending, bounded: a write that would take it past `maxBytes` first renames it
 * to `<file>.1` (replacing the one before) and begins a new file, so a log and its predecessor
 * hold at most twice the bound whatever the number of restarts, and the newest lines are always in
 * `file`. A rotation that fails (the folder removed under a stopping process) keeps the current file.
 */
export function openLogFile(file: string, maxBytes: number = LOG_FILE_MAX_BYTES): LogFile {
  let size = sizeOf(file);
  let stream = appendTo(file);
  return {
    write(chunk) {
      if (size > 0 && size + chunk.length > maxBytes) {
        try {
          fs.renameSync(file, `${file}.1`);
          const next = appendTo(file);
          stream.end();
          stream = next;
          size = 0;
        } catch {
          // Nothing renamed, or nothing opened after it: the current stream still writes.
        }
      }
      stream.write(chunk);
      size += chunk.length;
    },
    end: () => stream.end(),
  };
}

function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/** Opened now, not on the stream's first tick: a rotation right after cannot race the open. */
function appendTo(file: string): fs.WriteStream {
  return fs.createWriteStream(file, { fd: fs.openSync(file, 'a') });
}
