import type { Logger } from 'winston';
import { createLogger, createSilentLogger, LOG_LEVELS, type LogLevel } from '../../observability/logger.js';

/** SETTEE_TEST_LOG_LEVEL=debug shows the components' logs while a test runs; silent otherwise. */
export function testLogger(component: string): Logger {
  const level = process.env.SETTEE_TEST_LOG_LEVEL as LogLevel | undefined;
  if (!level || !LOG_LEVELS.includes(level)) return createSilentLogger();
  return createLogger({ level, component, stream: process.stderr });
}
