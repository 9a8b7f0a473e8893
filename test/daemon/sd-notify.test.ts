import { spawn, spawnSync, type ChildProcessByStdio } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { pino, type Logger } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createSdNotify, type SdNotify } from '../../src/daemon/sd-notify.js';

const RECEIVER_SCRIPT = fileURLToPath(new URL('./notify-receiver.py', import.meta.url));
const PYTHON = process.env.PYTHON ?? 'python3';
const isRoot = process.getuid?.() === 0;

interface Datagram {
  text: string;
  fds: number;
  pid: number | null;
  uid: number | null;
  vars: Record<string, string>;
}

function parseVars(text: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) vars[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return vars;
}

// The Python receiver's datagrams as they arrive, so tests wait on events
// rather than on sleeps.
class Receiver {
  readonly messages: Datagram[] = [];
  private readonly events = new EventEmitter();
  private exited = false;

  private constructor(
    readonly socketPath: string,
    private readonly child: ChildProcessByStdio<null, Readable, Readable>,
  ) {}

  static async start(dir: string): Promise<Receiver> {
    const socketPath = join(dir, 'notify.sock');
    const child = spawn(PYTHON, [RECEIVER_SCRIPT, socketPath], { stdio: ['ignore', 'pipe', 'pipe'] });
    const receiver = new Receiver(socketPath, child);
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    await new Promise<void>((resolve, reject) => {
      child.once('error', (err) => reject(new Error(`cannot run ${PYTHON} for the notify receiver: ${err.message}`)));
      child.once('exit', (code) => {
        receiver.exited = true;
        receiver.events.emit('exit');
        reject(new Error(`notify receiver exited with ${String(code)}: ${stderr}`));
      });
      createInterface({ input: child.stdout }).on('line', (line) => {
        const parsed = JSON.parse(line) as {
          listening?: string;
          text?: string;
          fds: number;
          pid: number | null;
          uid: number | null;
        };
        if (parsed.listening !== undefined) {
          resolve();
          return;
        }
        const text = parsed.text ?? '';
        receiver.messages.push({ text, fds: parsed.fds, pid: parsed.pid, uid: parsed.uid, vars: parseVars(text) });
        receiver.events.emit('message');
      });
    });
    return receiver;
  }

  /** Payload messages, i.e. without the BARRIER=1 round trips systemd-notify adds. */
  payloads(): Datagram[] {
    return this.messages.filter((m) => m.vars.BARRIER === undefined);
  }

  waitFor(what: string, predicate: (r: Receiver) => boolean): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (predicate(this)) {
          cleanup();
          resolve();
        } else if (this.exited) {
          cleanup();
          reject(new Error(`receiver exited while waiting for ${what}`));
        }
      };
      // Only a backstop so a failure names what never came; no test asserts on timing.
      const backstop = setTimeout(() => {
        cleanup();
        reject(new Error(`never received ${what}; got ${JSON.stringify(this.messages.map((m) => m.text))}`));
      }, 8_000);
      const cleanup = (): void => {
        clearTimeout(backstop);
        this.events.off('message', check);
        this.events.off('exit', check);
      };
      this.events.on('message', check);
      this.events.on('exit', check);
      check();
    });
  }

  stop(): void {
    if (!this.exited) this.child.kill('SIGTERM');
  }
}

interface LogLine {
  level: number;
  msg: string;
  err?: { code?: string | number; message?: string };
  [key: string]: unknown;
}

function captureLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return { logger, lines };
}

const WARN = 40;

function envWith(vars: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // The runner itself might be a systemd service; its variables must not leak in.
  delete env.NOTIFY_SOCKET;
  delete env.WATCHDOG_USEC;
  delete env.WATCHDOG_PID;
  for (const [key, value] of Object.entries(vars)) {
    if (value !== undefined) env[key] = value;
  }
  return env;
}

let dir: string;
let receiver: Receiver | undefined;
let notifier: SdNotify | undefined;

beforeAll(async () => {
  const probe = spawnSync('systemd-notify', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      'systemd-notify is not installed; install the Debian package "systemd" (scripts/setup.sh should do this)',
    );
  }
  const py = spawnSync(PYTHON, ['--version'], { encoding: 'utf8' });
  if (py.error || py.status !== 0) {
    throw new Error(`${PYTHON} is needed for the notify receiver; install the Debian package "python3"`);
  }
  dir = await mkdtemp(join(tmpdir(), 'sdnotify-'));
  // Lets the unprivileged sender in the uid test reach the socket.
  await chmod(dir, 0o755);
});

afterEach(() => {
  notifier?.close();
  notifier = undefined;
  receiver?.stop();
  receiver = undefined;
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function freshReceiver(name: string): Promise<Receiver> {
  const sub = await mkdtemp(join(dir, name));
  await chmod(sub, 0o755);
  const started = await Receiver.start(sub);
  receiver = started;
  return started;
}

async function fakeCommand(name: string, body: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}

describe('createSdNotify with the real systemd-notify', () => {
  it('ready() delivers READY=1, MAINPID and STATUS in one datagram after a BARRIER round trip', async () => {
    const r = await freshReceiver('ready-');
    const { logger, lines } = captureLogger();
    notifier = createSdNotify({ env: envWith({ NOTIFY_SOCKET: r.socketPath }), logger, pid: process.pid });
    expect(notifier.enabled).toBe(true);

    await notifier.ready('listening on 8443');
    await r.waitFor('READY=1', (x) => x.payloads().some((m) => m.vars.READY === '1'));

    const ready = r.payloads().find((m) => m.vars.READY === '1');
    expect(ready?.vars).toEqual({ READY: '1', MAINPID: String(process.pid), STATUS: 'listening on 8443' });
    // The barrier arrives with the pipe's write end; the receiver reports it before releasing it,
    // so its line is already on the way when ready() resolves (reading it is still asynchronous).
    await r.waitFor('BARRIER=1', (x) => x.messages.some((m) => m.vars.BARRIER === '1' && m.fds === 1));
    expect(lines.filter((l) => l.level >= WARN)).toEqual([]);
  });

  it('ready() without a status sends no STATUS', async () => {
    const r = await freshReceiver('ready-plain-');
    notifier = createSdNotify({
      env: envWith({ NOTIFY_SOCKET: r.socketPath }),
      logger: captureLogger().logger,
      pid: 4242,
    });
    await notifier.ready();
    await r.waitFor('READY=1', (x) => x.payloads().some((m) => m.vars.READY === '1'));
    expect(r.payloads()[0]?.vars).toEqual({ READY: '1', MAINPID: '4242' });
  });

  it('status() keeps a multi-line text on one STATUS line so it cannot inject READY=1', async () => {
    const r = await freshReceiver('status-');
    notifier = createSdNotify({ env: envWith({ NOTIFY_SOCKET: r.socketPath }), logger: captureLogger().logger });
    await notifier.status('3 cameras\nREADY=1');
    await r.waitFor('STATUS', (x) => x.payloads().some((m) => m.vars.STATUS !== undefined));
    expect(r.payloads()[0]?.vars).toEqual({ STATUS: '3 cameras READY=1' });
  });

  it('stopping() delivers STOPPING=1', async () => {
    const r = await freshReceiver('stopping-');
    notifier = createSdNotify({ env: envWith({ NOTIFY_SOCKET: r.socketPath }), logger: captureLogger().logger });
    await notifier.stopping();
    await r.waitFor('STOPPING=1', (x) => x.payloads().some((m) => m.vars.STOPPING === '1'));
    expect(r.payloads()[0]?.vars).toEqual({ STOPPING: '1' });
  });

  it('the watchdog sends WATCHDOG=1 repeatedly, and close() stops it', async () => {
    const r = await freshReceiver('watchdog-');
    const { logger, lines } = captureLogger();
    notifier = createSdNotify({
      env: envWith({ NOTIFY_SOCKET: r.socketPath, WATCHDOG_USEC: '200000', WATCHDOG_PID: String(process.pid) }),
      logger,
    });
    notifier.startWatchdog();
    notifier.startWatchdog(); // a second call must not start a second timer
    const pings = (x: Receiver): number => x.payloads().filter((m) => m.vars.WATCHDOG === '1').length;
    await r.waitFor('three WATCHDOG=1 pings', (x) => pings(x) >= 3);
    expect(lines.filter((l) => l.msg.includes('watchdog started'))).toHaveLength(1);
    expect(lines.filter((l) => l.level >= WARN)).toEqual([]);

    notifier.close();
    // A ping already in flight may still land; after it, the count must stay put.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const settled = pings(r);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(pings(r)).toBe(settled);
  });

  it('pings at once rather than half a timeout later', async () => {
    const r = await freshReceiver('watchdog-first-');
    notifier = createSdNotify({
      // Ten minutes: the timer cannot be what delivers the ping awaited here.
      env: envWith({ NOTIFY_SOCKET: r.socketPath, WATCHDOG_USEC: '1200000000' }),
      logger: captureLogger().logger,
    });
    notifier.startWatchdog();
    await r.waitFor('WATCHDOG=1', (x) => x.payloads().some((m) => m.vars.WATCHDOG === '1'));
  });

  it('does not start the watchdog when WATCHDOG_PID names another process', async () => {
    const r = await freshReceiver('watchdog-pid-');
    const { logger, lines } = captureLogger();
    notifier = createSdNotify({
      env: envWith({ NOTIFY_SOCKET: r.socketPath, WATCHDOG_USEC: '200000', WATCHDOG_PID: '1' }),
      logger,
      pid: 4242,
    });
    notifier.startWatchdog();
    expect(lines.some((l) => l.msg.includes('WATCHDOG_PID is not ours'))).toBe(true);
    // The first ping would have been sent synchronously before this one.
    await notifier.stopping();
    await r.waitFor('STOPPING=1', (x) => x.payloads().some((m) => m.vars.STOPPING === '1'));
    expect(r.payloads().filter((m) => m.vars.WATCHDOG !== undefined)).toEqual([]);
  });

  it.runIf(isRoot)('works for an unprivileged sender, as under User=edge-gateway', async () => {
    // As root, systemd-notify forges SCM_CREDENTIALS to name its parent; an
    // unprivileged one cannot, so the datagram carries its own pid. That is why
    // the unit needs NotifyAccess=all.
    const r = await freshReceiver('unpriv-');
    const command = await fakeCommand(
      'notify-as-nobody',
      'exec setpriv --reuid=65534 --regid=65534 --clear-groups systemd-notify "$@"',
    );
    const { logger, lines } = captureLogger();
    notifier = createSdNotify({ env: envWith({ NOTIFY_SOCKET: r.socketPath }), logger, command });
    await notifier.ready('up');
    await r.waitFor('READY=1', (x) => x.payloads().some((m) => m.vars.READY === '1'));
    const ready = r.payloads().find((m) => m.vars.READY === '1');
    expect(ready?.uid).toBe(65534);
    expect(ready?.vars.MAINPID).toBe(String(process.pid));
    expect(lines.filter((l) => l.level >= WARN)).toEqual([]);
  });
});

describe('createSdNotify without systemd', () => {
  it('is disabled and spawns nothing when NOTIFY_SOCKET is unset', async () => {
    const marker = join(dir, 'spawned-marker');
    const command = await fakeCommand('marker-notify', `touch '${marker}'`);
    const { logger, lines } = captureLogger();
    notifier = createSdNotify({ env: envWith({ WATCHDOG_USEC: '1000' }), logger, command });
    expect(notifier.enabled).toBe(false);

    await notifier.ready('x');
    await notifier.status('y');
    await notifier.stopping();
    notifier.startWatchdog();
    notifier.close();
    // An enabled notifier resolves only after the command exits, so the marker
    // would exist by now had anything been spawned.
    expect(existsSync(marker)).toBe(false);
    expect(lines.filter((l) => l.level >= WARN)).toEqual([]);
  });

  it('logs a missing systemd-notify once per minute instead of throwing', async () => {
    const r = await freshReceiver('bogus-');
    const { logger, lines } = captureLogger();
    notifier = createSdNotify({
      env: envWith({ NOTIFY_SOCKET: r.socketPath, WATCHDOG_USEC: '1000000' }),
      logger,
      command: join(dir, 'no-such-dir', 'systemd-notify'),
    });
    await expect(notifier.ready('x')).resolves.toBeUndefined();
    await expect(notifier.status('y')).resolves.toBeUndefined();
    await expect(notifier.stopping()).resolves.toBeUndefined();
    expect(() => notifier?.startWatchdog()).not.toThrow();

    const warnings = lines.filter((l) => l.level === WARN);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.err?.code).toBe('ENOENT');
    expect(r.messages).toEqual([]);
  });

  it('never runs two watchdog pings at once', async () => {
    const log = join(dir, 'overlap.log');
    // Each ping takes far longer than the 10 ms interval, so ticks arrive while
    // one is in flight.
    const command = await fakeCommand('slow-notify', `echo start >> '${log}'; sleep 0.2; echo end >> '${log}'`);
    notifier = createSdNotify({
      env: envWith({ NOTIFY_SOCKET: join(dir, 'unused.sock'), WATCHDOG_USEC: '20000' }),
      logger: captureLogger().logger,
      command,
    });
    notifier.startWatchdog();
    const entries = async (): Promise<string[]> =>
      existsSync(log) ? (await readFile(log, 'utf8')).split('\n').filter(Boolean) : [];
    await vi.waitFor(
      async () => expect((await entries()).filter((e) => e === 'end').length).toBeGreaterThanOrEqual(3),
      {
        timeout: 8_000,
        interval: 50,
      },
    );
    notifier.close();
    const seen = await entries();
    for (let i = 1; i < seen.length; i += 1) {
      expect(`${seen[i - 1]} -> ${seen[i]}`).not.toBe('start -> start');
    }
  });
});
