import { pino, type Logger } from 'pino';
import type { Config } from '../config/schema.js';

// The daemon process itself: its logger, and what it does with a bug that escapes every promise.

/**
 * Passwords are never logged on purpose (camera accounts, MQTT): these paths are a second line, so
 * an object logged whole by mistake (a config entry, a request body) still shows none.
 */
export const REDACTED_PATHS = ['password', '*.password', '*.*.password', '*.passwordSealed', '*.password_sealed'];

export function createLogger(config: Config): Logger {
  return pino({
    level: config.log.level,
    base: { service: 'edge-gateway' },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  });
}

/**
 * Last resort for a bug that escapes every promise: log it with its stack at fatal level and exit
 * non-zero, so systemd (Restart=on-failure) restarts the daemon. It never carries on: after an
 * unexpected exception the state of streams, recorders and sessions is unknown. Camera answers
 * never get here (each ends as a typed error of its own call, see src/onvif/library.ts).
 */
export function installFatalHandlers(
  logger: Logger,
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  const fatal = (origin: 'uncaughtException' | 'unhandledRejection') => (err: unknown) => {
    logger.fatal({ err: err instanceof Error ? err : new Error(String(err)), origin }, 'uncaught exception');
    exit(70); // EX_SOFTWARE
  };
  process.on('uncaughtException', fatal('uncaughtException'));
  process.on('unhandledRejection', fatal('unhandledRejection'));
}
