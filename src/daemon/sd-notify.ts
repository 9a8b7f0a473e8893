// systemd readiness, status and watchdog notifications (sd_notify(3)).
//
// Node has no API for sending on an AF_UNIX datagram socket, so each message is
// handed to the `systemd-notify` binary. Since systemd 246 that binary follows
// every message with a BARRIER=1 round trip and exits only once PID 1 has
// processed it; without that, the short-lived sender could exit before systemd
// looked up its cgroup and the message would be dropped. The sender is a child
// of ours, not the main PID, so the unit needs NotifyAccess=all.

import { execFile } from 'node:child_process';
import type { BaseLogger } from 'pino';

export interface SdNotify {
  /** READY=1 plus MAINPID (and STATUS when given). */
  ready(status?: string): Promise<void>;
  status(text: string): Promise<void>;
  /** STOPPING=1: tells systemd the shutdown is ours, not a hang. */
  stopping(): Promise<void>;
  /** Starts WATCHDOG=1 pings when systemd asked for them; otherwise does nothing. */
  startWatchdog(): void;
  close(): void;
  readonly enabled: boolean;
}

export interface SdNotifyOptions {
  env: NodeJS.ProcessEnv;
  logger: BaseLogger;
  /** Defaults to 'systemd-notify', found through PATH. */
  command?: string;
  /** The pid announced as MAINPID and compared with WATCHDOG_PID; defaults to process.pid. */
  pid?: number;
}

// systemd-notify gives up on its barrier after 5 s; past 10 s something is
// wedged and a stuck child must not pile up behind the watchdog.
const SEND_TIMEOUT_MS = 10_000;
// A missing or broken systemd-notify would otherwise log on every watchdog tick.
const WARN_INTERVAL_MS = 60_000;

export function createSdNotify(opts: SdNotifyOptions): SdNotify {
  const { env, logger } = opts;
  const command = opts.command ?? 'systemd-notify';
  const pid = opts.pid ?? process.pid;
  const enabled = typeof env.NOTIFY_SOCKET === 'string' && env.NOTIFY_SOCKET !== '';

  let lastWarnAt = Number.NEGATIVE_INFINITY;
  let suppressedWarnings = 0;
  let watchdogTimer: NodeJS.Timeout | undefined;
  let pingInFlight = false;
  let closed = false;

  const warn = (fields: Record<string, unknown>, msg: string): void => {
    // performance.now() is monotonic, so a wall-clock jump (NTP on a Pi without
    // an RTC) can neither silence nor unleash the warnings.
    const now = performance.now();
    if (now - lastWarnAt < WARN_INTERVAL_MS) {
      suppressedWarnings += 1;
      return;
    }
    lastWarnAt = now;
    const suppressed = suppressedWarnings;
    suppressedWarnings = 0;
    logger.warn({ ...fields, suppressed }, msg);
  };

  const send = (args: readonly string[]): Promise<void> => {
    if (!enabled) return Promise.resolve();
    return new Promise<void>((resolve) => {
      try {
        execFile(
          command,
          args,
          { env, timeout: SEND_TIMEOUT_MS, killSignal: 'SIGKILL', encoding: 'utf8' },
          (err, _stdout, stderr) => {
            if (err) {
              warn(
                { err, command, args, stderr: stderr.trim() || undefined },
                'sd_notify: systemd-notify failed; systemd may not see readiness or watchdog pings',
              );
            }
            resolve();
          },
        );
      } catch (err) {
        // execFile throws synchronously for some argument errors (e.g. a NUL byte).
        warn({ err, command, args }, 'sd_notify: could not run systemd-notify');
        resolve();
      }
    });
  };

  // A newline would let a status text inject other assignments (READY=1, MAINPID=…).
  const oneLine = (text: string): string => text.replace(/[\r\n\0]+/g, ' ');

  const ping = (): void => {
    // An overlapping ping would only add load on an already slow box; the next
    // tick comes at half the timeout, so skipping one still leaves a margin.
    if (pingInFlight || closed) return;
    pingInFlight = true;
    void send(['WATCHDOG=1']).finally(() => {
      pingInFlight = false;
    });
  };

  const watchdogIntervalMs = (): number | undefined => {
    const usecText = env.WATCHDOG_USEC;
    if (usecText === undefined || usecText === '') return undefined;
    // systemd sets WATCHDOG_PID to the main pid; a value naming another process
    // means the variables were inherited from a parent and are not ours to serve.
    const watchdogPid = env.WATCHDOG_PID;
    if (watchdogPid !== undefined && watchdogPid !== '' && watchdogPid !== String(pid)) {
      logger.debug({ watchdogPid, pid }, 'sd_notify: WATCHDOG_PID is not ours; watchdog not started');
      return undefined;
    }
    if (!/^\d+$/.test(usecText) || Number(usecText) <= 0) {
      logger.warn({ WATCHDOG_USEC: usecText }, 'sd_notify: unusable WATCHDOG_USEC; watchdog not started');
      return undefined;
    }
    // Half the timeout, as sd_watchdog_enabled(3) recommends, leaves room for
    // one slow ping without systemd killing us.
    return Math.max(1, Math.floor(Number(usecText) / 2000));
  };

  if (!enabled) logger.debug('sd_notify: NOTIFY_SOCKET unset; not running under systemd notify');

  return {
    enabled,
    ready(status?: string): Promise<void> {
      const args = ['--ready', `--pid=${pid}`];
      if (status !== undefined) args.push(`--status=${oneLine(status)}`);
      return send(args);
    },
    status(text: string): Promise<void> {
      return send([`--status=${oneLine(text)}`]);
    },
    stopping(): Promise<void> {
      return send(['STOPPING=1']);
    },
    startWatchdog(): void {
      if (!enabled || closed || watchdogTimer !== undefined) return;
      const intervalMs = watchdogIntervalMs();
      if (intervalMs === undefined) return;
      // Ping now rather than half a timeout from now: systemd arms the watchdog
      // at READY=1, which may have been sent some time before this call.
      ping();
      watchdogTimer = setInterval(ping, intervalMs);
      // The daemon's servers keep it alive; the watchdog alone must not.
      watchdogTimer.unref();
      logger.debug({ intervalMs }, 'sd_notify: watchdog started');
    },
    close(): void {
      closed = true;
      if (watchdogTimer !== undefined) clearInterval(watchdogTimer);
      watchdogTimer = undefined;
    },
  };
}
