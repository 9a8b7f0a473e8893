import { setFlagsFromString } from 'node:v8';
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
 * How far V8 lets the old generation grow past what a full collection left live before it marks the
 * whole heap again: 100 %. V8's own choice follows its measured collection speed and, on a daemon
 * whose garbage is mostly short-lived video buffers, often settles at 10–30 %: the headroom (a few MB
 * over a 40 MB heap) is then used up by one young collection's worth of packet buffers, and V8 marks
 * the heap about every second on its helper threads. The benches found that in some runs and not in
 * others (docs/systemd.md). Not in NODE_OPTIONS, which refuses this flag; V8 reads it at every
 * collection, so setting it as the daemon starts is enough.
 */
export const HEAP_GROWTH_FLAG = '--heap-growing-percent=100';

export function tuneHeapGrowth(): void {
  setFlagsFromString(HEAP_GROWTH_FLAG);
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
