import winston from 'winston';

export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoggerOptions {
  level: LogLevel;
  /** Fixed `component` field on every line, e.g. `operator`. */
  component: string;
  /** Where lines go; defaults to stdout. Tests pass a stream to read what was logged. */
  stream?: NodeJS.WritableStream;
}

/**
 * One JSON object per line. Callers derive child loggers (`logger.child({controller, key})`)
 * instead of formatting strings, and never pass secrets or whole objects.
 */
export function createLogger(options: LoggerOptions): winston.Logger {
  const transport = options.stream
    ? new winston.transports.Stream({ stream: options.stream })
    : new winston.transports.Console();
  return winston.createLogger({
    level: options.level,
    levels: winston.config.npm.levels,
    defaultMeta: { component: options.component },
    format: winston.format.combine(
      winston.format.timestamp(),
      winston.format.errors({ stack: true }),
      winston.format.json(),
    ),
    transports: [transport],
  });
}

/** A logger that drops everything, for code under test that needs one but whose logs are not the subject. */
export function createSilentLogger(): winston.Logger {
  return winston.createLogger({ silent: true });
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
