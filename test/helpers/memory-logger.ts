import winston from 'winston';
import Transport from 'winston-transport';

/** Keeps what a logger writes, to read it back. */
class MemoryTransport extends Transport {
  readonly entries: Array<Record<string, unknown>> = [];
  private wrote: () => void = () => undefined;
  readonly written = new Promise<void>((resolve) => (this.wrote = resolve));
  override log(info: Record<string, unknown>, next: () => void): void {
    this.entries.push(info);
    this.wrote();
    next();
  }
}

export interface MemoryLogger {
  logger: winston.Logger;
  /** Every entry written, child loggers' included, with their fields. */
  entries: Array<Record<string, unknown>>;
  /** Resolves once the first entry is written. */
  written: Promise<void>;
}

/** A real winston logger at `level` whose entries stay in memory, for tests that read the logs. */
export function createMemoryLogger(level = 'debug'): MemoryLogger {
  const memory = new MemoryTransport();
  const logger = winston.createLogger({ level, transports: [memory] });
  return { logger, entries: memory.entries, written: memory.written };
}
