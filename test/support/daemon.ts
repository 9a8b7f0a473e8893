import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { makeClient, type Client } from './https.js';

// The built daemon (`node dist/cli.js start`) as a real process, for tests that kill it, restart it
// on the same data directory and look at what it left on disk.

export const CLI = path.resolve(import.meta.dirname, '../../dist/cli.js');
const run = promisify(execFile);

export interface Daemon {
  child: ChildProcess;
  apiUrl: string;
  /** Every line the daemon printed so far (stdout and stderr). */
  logs(): string;
  /** Its log lines (JSON) whose msg is `msg`. */
  logged(msg: string): Array<Record<string, unknown>>;
  /** HTTPS client trusting the daemon's certificate. */
  request: Client;
  /** Resolves with the exit code (null) and signal once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * The environment the systemd unit gives the daemon (its Environment= lines: glibc's malloc
 * settings, V8's flags), so that the tests run it as it runs on a gateway.
 */
export function unitEnvironment(): Record<string, string> {
  const unit = readFileSync(path.resolve(import.meta.dirname, '../../systemd/edge-gateway.service'), 'utf8');
  return Object.fromEntries([...unit.matchAll(/^Environment=(\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));
}

/** Starts the daemon as the unit does and resolves once it logged that it started (rejects if it exits first). */
export function startDaemon(
  configFile: string,
  opts: { cwd: string; certFile: (apiUrl: string) => string },
): Promise<Daemon> {
  const child = spawn(process.execPath, [CLI, 'start', '--config', configFile], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? '', ...unitEnvironment() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const logged = (msg: string) =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => {
        try {
          return JSON.parse(l) as Record<string, unknown>;
        } catch {
          return {};
        }
      })
      .filter((l) => l.msg === msg);
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const started = logged('edge gateway started')[0];
      if (started && typeof started.apiUrl === 'string') {
        const apiUrl = started.apiUrl;
        resolve({
          child,
          apiUrl,
          logs: () => out,
          logged,
          request: makeClient(apiUrl, readFileSync(opts.certFile(apiUrl))),
          exited,
        });
      }
    });
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    void exited.then(({ code, signal }) =>
      reject(new Error(`daemon exited (${code ?? signal}) before it started: ${out.slice(-4000)}`)),
    );
  });
}

/** An access token from the daemon's local issuer, by the `token` command (a process of its own). */
export function cliToken(configFile: string, cwd: string, scope: string): string {
  const r = spawnSync(process.execPath, [CLI, 'token', '--config', configFile, '--scope', scope, '--ttl', '3600'], {
    cwd,
    env: { PATH: process.env.PATH ?? '' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (r.status !== 0) throw new Error(`token failed (${r.status}): ${r.stderr}`);
  return r.stdout.trim();
}

/** Files (not directories) below `dir`, absolute; [] when it does not exist. */
export function filesUnder(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => path.join(e.parentPath, e.name))
      .sort();
  } catch {
    return [];
  }
}

/**
 * Live ffmpeg processes (not zombies) with an argument that mentions `dir`: a daemon's recorder
 * children, found through /proc whoever their parent is now.
 */
export function ffmpegProcessesUsing(dir: string): Array<{ pid: number; args: string[] }> {
  const found: Array<{ pid: number; args: string[] }> = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const args = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (args.length === 0 || path.basename(args[0]!) !== 'ffmpeg') continue;
      if (!args.some((a) => a.includes(dir))) continue;
      // Field 3 of stat is the state; a zombie has ended, it only waits for its new parent to reap it.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      found.push({ pid: Number(name), args });
    } catch {
      // ended while we looked
    }
  }
  return found;
}

export interface Probed {
  durationS: number;
  codec: string;
  /** What ffmpeg says when decoding the whole file at level error ('' when it decodes cleanly). */
  decodeErrors: string;
}

/** ffprobe's duration and codec, and a full decode of the file; throws when ffprobe cannot read it. */
export async function probeClip(file: string): Promise<Probed> {
  const { stdout } = await run('ffprobe', [
    '-v',
    'error',
    '-show_entries',
    'format=duration:stream=codec_name',
    '-of',
    'json',
    file,
  ]);
  const probed = JSON.parse(stdout) as { format: { duration?: string }; streams: Array<{ codec_name: string }> };
  const decoded = await run('ffmpeg', ['-nostdin', '-v', 'error', '-i', file, '-f', 'null', '-']);
  return {
    durationS: Number(probed.format.duration),
    codec: probed.streams[0]?.codec_name ?? '',
    decodeErrors: decoded.stderr,
  };
}

/**
 * MD5 of every decoded video frame of `file`, in order (ffmpeg's framemd5). A file cut off in the
 * middle of a frame (a segment ffmpeg was still writing) gives the frames before the cut.
 */
export async function frameHashes(file: string): Promise<string[]> {
  return (await decodedFrames(file)).map((f) => f.hash);
}

/** Each decoded video frame's MD5 and its presentation time and duration in seconds (stream time). */
export async function decodedFrames(file: string): Promise<Array<{ hash: string; ptsS: number; durationS: number }>> {
  let stdout: string;
  try {
    stdout = (
      await run('ffmpeg', ['-nostdin', '-v', 'quiet', '-i', file, '-map', '0:v:0', '-f', 'framemd5', '-'], {
        maxBuffer: 64 * 1024 * 1024,
      })
    ).stdout;
  } catch (err) {
    stdout = (err as { stdout?: string }).stdout ?? '';
  }
  const lines = stdout.split('\n');
  // "#tb 0: 1/25": the time base of the columns below.
  const tb = /^#tb 0: (\d+)\/(\d+)/m.exec(stdout);
  const unitS = tb ? Number(tb[1]) / Number(tb[2]) : 0;
  return lines
    .filter((l) => l.trim() && !l.startsWith('#'))
    .map((l) => {
      const cols = l.split(',').map((c) => c.trim());
      return { hash: cols.at(-1)!, ptsS: Number(cols[2]) * unitS, durationS: Number(cols[3]) * unitS };
    });
}

export interface RecordingRow {
  id: string;
  file_name: string;
  size_bytes: number;
  started_at: number;
  ended_at: number;
  alert_id: string | null;
}

/** The recordings table, read straight from the SQLite file (read-only, the daemon may be dead). */
export function recordingRows(dataDir: string): RecordingRow[] {
  const db = new Database(path.join(dataDir, 'gateway.db'), { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare(
        'SELECT id, file_name, size_bytes, started_at, ended_at, alert_id FROM recordings ORDER BY started_at, id',
      )
      .all() as RecordingRow[];
  } finally {
    db.close();
  }
}

/** Alerts of the recorder (not device_offline), oldest first, read-only from the SQLite file. */
export function eventAlerts(
  dataDir: string,
): Array<{ id: string; type: string; recording_id: string | null; created_at: number }> {
  const db = new Database(path.join(dataDir, 'gateway.db'), { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare(
        "SELECT id, type, recording_id, created_at FROM alerts WHERE type != 'device_offline' ORDER BY created_at, id",
      )
      .all() as Array<{
      id: string;
      type: string;
      recording_id: string | null;
      created_at: number;
    }>;
  } finally {
    db.close();
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
