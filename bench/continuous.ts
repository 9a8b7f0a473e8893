// Benchmark: continuous recording (recording.continuous, docs/recording.md "Continuous footage"). N
// simulated 1080p H.264 cameras at 4 Mbit/s (15 frames/s, a keyframe every second, looped) with their
// 320x180 sub streams (200 kbit/s), the gateway as its own process with its event recorders as usual
// (software motion off, no event), the footage on a tmpfs mounted for the run (another device than /
// and data_dir, as a USB disk would be; mounting needs root), the sub stream kept (the default).
//
// Per N, with the same cameras, the gateway runs twice: continuous recording off, then on. Each time,
// once every camera is online (and, on, every camera's footage is being written) and after a warm-up,
// over --seconds:
//  - CPU of the daemon (node, utime + stime from /proc) and of its tree (its ffmpeg children too), % of
//    one core; what continuous recording costs on top = (on - off) / N per camera (goal <= 0.5 %), the
//    two runs measured alike one after the other, ± its standard error from the second-by-second
//    figures. How busy the machine was (it is shared) is shown beside it.
// Then, at the end of the "on" run (the cameras stopped first, so nothing more comes in, then the
// gateway, which writes what it holds and commits the index):
//  - bytes written to the footage disk (the files, init segments included) / bytes of video the
//    gateway read from the kept streams (RTP payloads: edge_gateway_footage_bytes_received_total), over
//    the whole run (goal <= 1.02);
//  - footage files written (one fsync each: edge_gateway_footage_files_written_total) and index
//    commits (one transaction for every camera's files, one fsync of SQLite's WAL:
//    edge_gateway_footage_index_flush_seconds_count) over the run, per camera-hour of footage indexed
//    and per hour of the gateway's run; the goal: commits do not grow with the number of files (at
//    most one per flush_s, whatever N). A run shorter than a few file_s and flush_s shows few of either;
//  - index bytes per camera-day, from the gateway's database once it stopped: the bytes the
//    footage_files rows and their indexes take on their pages (SQLite's dbstat), as a fixed part per row
//    times 86400 / file_s rows a day, plus the fragment tables (8 B a group of pictures) per second of
//    footage times 86400.
// At one N (--extras-at, default the largest), after its CPU window, the cameras still running, on the
// footage indexed so far (the bench cannot wait a day: the window is what the run kept, a few minutes):
//  - scrub: GET /v1/devices/{id}/footage/frame?at=…&width=320 at --scrub random moments of the window,
//    each asked twice: the first answer for a picture (decoded then) and the later ones (kept): p50 /
//    p95 (goal: p95 <= 300 ms once kept);
//  - playback: --playback trials in Debian's chromium (playwright-core) with hls.js, from the GET of
//    …/footage/playback?start&end at a random second of the window to the first frame presented
//    (requestVideoFrameCallback): p50 / max (goal <= 1 s, every trial);
//  - export: the whole window of one camera downloaded (GET …/footage/download, recordings:write; again
//    on a new connection each time for 2 s, as a window of a few MB takes milliseconds), MB/s against
//    `cat` of the same files to /dev/null, read over and over (the limit: both read from the tmpfs),
//    and the daemon's RSS sampled every 10 ms meanwhile (flat: max - min).
// Options, after `npm run bench -- continuous`: --cameras 1,4,8,16 --seconds 60 --warmup 15 --scrub 20
// --playback 5 --extras-at N --file-s 60 --flush-s 60 --seed 1. A quick trial: --cameras 1,4
// --seconds 15 --warmup 5 --file-s 10 --flush-s 5 (files and commits that come within seconds; the
// defaults are the gateway's). BENCH_NODE_ARGS: flags for the gateway's node, split on spaces
// (`--cpu-prof --cpu-prof-dir=DIR` profiles each run). Needs root (mount), ffmpeg, chromium and the
// simulator's packages (see ./run). About 15 minutes with the defaults.
import { execFile, execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { Agent, request } from 'node:https';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs, promisify } from 'node:util';
import Database from 'better-sqlite3';
import { chromium } from 'playwright-core';
import Type, { type Static, type TSchema } from 'typebox';
import type { Fleet } from '../dist/onvif/simulator/fleet.js';
import { cameraEntries, startBenchFleet } from './support/fleet.ts';
import { getJson, metric, metricsText, startGatewayProcess, type GatewayProcess } from './support/gateway-process.ts';
import { DevicePage, narrow } from './support/json.ts';
import { procStat, rssMiB } from './support/proc.ts';
import { percentile, round } from './support/stats.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(3),
  options: {
    cameras: { type: 'string', default: '1,4,8,16' },
    seconds: { type: 'string', default: '60' },
    warmup: { type: 'string', default: '15' },
    scrub: { type: 'string', default: '20' },
    playback: { type: 'string', default: '5' },
    'extras-at': { type: 'string' },
    'file-s': { type: 'string', default: '60' },
    'flush-s': { type: 'string', default: '60' },
    seed: { type: 'string', default: '1' },
  },
});
const counts = args.cameras.split(',').map(Number);
const seconds = Number(args.seconds);
const warmupS = Number(args.warmup);
const scrubMoments = Number(args.scrub);
const playbackTrials = Number(args.playback);
const extrasAt = args['extras-at'] === undefined ? Math.max(...counts) : Number(args['extras-at']);
const fileS = Number(args['file-s']);
const flushS = Number(args['flush-s']);
const seed = Number(args.seed);
const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
if ([...counts, seconds, warmupS, scrubMoments, playbackTrials, extrasAt, fileS, flushS, seed].some((x) => !(x >= 0))) {
  console.error('usage: npm run bench -- continuous [--cameras 1,4,8,16] [--seconds 60] [--warmup 15] [--scrub 20]');
  console.error('         [--playback 5] [--extras-at N] [--file-s 60] [--flush-s 60] [--seed 1]');
  process.exit(2);
}
const MAIN_KBPS = 4000;
const CPU_GOAL_PCT = 0.5;
const RATIO_GOAL = 1.02;
const SCRUB_GOAL_MS = 300;
const PLAYBACK_GOAL_MS = 1000;
const run = promisify(execFile);
const step = (msg: string) => console.error(`[continuous] ${msg}`);
const iso = (ms: number) => new Date(ms).toISOString();

/** mulberry32: the random moments and windows of a run, the same for a seed. */
function seeded(s: number): () => number {
  let a = s >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = seeded(seed);

// --- the machine -----------------------------------------------------------------------------------

interface FootageDisk {
  dir: string;
  tmpfs: boolean;
  /** Why it is not a tmpfs; null when it is. */
  note: string | null;
  release: () => Promise<void>;
}

/** A tmpfs for the footage, or (when none can be mounted) a directory on the system disk, and why. */
async function footageDisk(): Promise<FootageDisk> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-footage-'));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    await run('mount', ['-t', 'tmpfs', '-o', 'size=4g,mode=0700', 'tmpfs', dir]);
  } catch (err) {
    const why = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    return {
      dir,
      tmpfs: false,
      note: `no tmpfs could be mounted (${why}): the footage is on the system disk, allow_on_system_disk: true`,
      release: async () => remove(),
    };
  }
  // Not left mounted when the bench stops half-way (the daemons are other processes: waiting is safe).
  const unmountOnExit = () => {
    try {
      execFileSync('umount', ['-l', dir]);
      remove();
    } catch {
      // already unmounted
    }
  };
  process.once('exit', unmountOnExit);
  return {
    dir,
    tmpfs: true,
    note: null,
    release: async () => {
      process.off('exit', unmountOnExit);
      await run('umount', ['-l', dir]);
      remove();
    },
  };
}

/** CPU seconds of `root` and all its descendants (their reaped children included), and of `root` alone. */
function cpuOf(root: number): { tree: number; own: number } {
  const parent = new Map<number, number>();
  const cpu = new Map<number, number>();
  let own = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const f = procStat(Number(name)).fields;
      parent.set(Number(name), Number(f[1]));
      cpu.set(Number(name), (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100);
      if (Number(name) === root) own = (Number(f[11]) + Number(f[12])) / 100;
    } catch {
      // ended while listed
    }
  }
  const inTree = (pid: number): boolean => {
    for (let p: number | undefined = pid, hops = 0; p !== undefined && hops < 64; p = parent.get(p), hops++)
      if (p === root) return true;
    return false;
  };
  let tree = 0;
  for (const [pid, seconds] of cpu) if (inTree(pid)) tree += seconds;
  return { tree, own };
}

/** CPU seconds (utime + stime) of one process. */
function ownCpu(pid: number): number {
  const f = procStat(pid).fields;
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** All cores: busy and total jiffies (how loaded the shared machine was). */
function machineCpu(): { busy: number; total: number } {
  const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  return { busy: f.slice(0, 8).reduce((a, b) => a + b, 0) - idle, total: f.slice(0, 8).reduce((a, b) => a + b, 0) };
}

/** Every file under `dir` with its size. */
function filesUnder(dir: string): Array<{ path: string; size: number }> {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return filesUnder(full);
    try {
      return [{ path: full, size: statSync(full).size }];
    } catch {
      return [];
    }
  });
}

// --- the gateway ---------------------------------------------------------------------------------

/** What GET /v1/footage and GET …/footage say, as far as the bench reads them. */
const FootageStatus = Type.Object({
  cameras: Type.Array(Type.Object({ device_id: Type.String(), recording: Type.Boolean(), files: Type.Number() })),
});
const SpanPage = Type.Object({ data: Type.Array(Type.Object({ start: Type.String(), end: Type.String() })) });

/** One run of the gateway with N cameras, continuous recording off or on. */
interface Phase {
  n: number;
  on: boolean;
  dir: string;
  segmentDir: string;
  /** storage_dir of the footage (on). */
  storage: string;
  gateway: GatewayProcess;
  ca: Buffer;
  agent: Agent;
  get: <T extends TSchema>(schema: T, p: string) => Promise<Static<T>>;
  deviceIds: string[];
  /** performance.now() when the gateway was started. */
  started: number;
}

function configYaml(fleet: Fleet, dir: string, segmentDir: string, footage: string | null, disk: FootageDisk) {
  const continuous =
    footage === null
      ? ''
      : `  continuous:\n    enabled: true\n    storage_dir: ${footage}\n    file_s: ${fileS}\n    flush_s: ${flushS}\n` +
        (disk.tmpfs ? '' : '    allow_on_system_disk: true\n');
  return (
    `gateway:\n  data_dir: ${dir}/data\napi:\n  host: 127.0.0.1\n  port: 0\nrtsp:\n  host: 127.0.0.1\n  port: 0\n  udp_port: 0\n` +
    `metrics:\n  listen: 127.0.0.1:0\nonvif:\n  discovery:\n    enabled: false\n` +
    `cameras:\n${cameraEntries(fleet, 'bench', (i) => `Bench ${i}`)}` +
    `recording:\n  storage_dir: ${dir}/clips\n  segment_dir: ${segmentDir}\n  motion:\n    mode: 'off'\n${continuous}` +
    `log:\n  level: info\n`
  );
}

/** Starts the gateway for N cameras, continuous recording on or off; resolves once it runs as measured. */
async function startPhase(n: number, fleet: Fleet, on: boolean, disk: FootageDisk): Promise<Phase> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-continuous-'));
  const segmentDir = mkdtempSync('/dev/shm/eg-bench-continuous-');
  const storage = path.join(disk.dir, `n${n}`);
  if (on) mkdirSync(storage);
  const configFile = path.join(dir, 'config.yaml');
  writeFileSync(configFile, configYaml(fleet, dir, segmentDir, on ? storage : null, disk));
  const started = performance.now();
  const gateway = await startGatewayProcess(configFile, nodeArgs);
  const ca = readFileSync(path.join(dir, 'data/tls/cert.pem'));
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const token = gateway.token('devices:read recordings:read');
  const get = <T extends TSchema>(schema: T, p: string) => getJson(schema, gateway.apiUrl, ca, token, p, agent);
  let online: string[] = [];
  for (const deadline = performance.now() + 90_000; performance.now() < deadline; await sleep(250)) {
    online = (await get(DevicePage, '/v1/devices?limit=200&status=online')).data.map((d) => d.id);
    if (online.length >= n) break;
  }
  if (online.length < n) throw new Error(`only ${online.length} of ${n} cameras online after 90 s`);
  if (on) {
    let writing = 0;
    for (const deadline = performance.now() + 60_000; performance.now() < deadline; await sleep(250)) {
      writing = (await get(FootageStatus, '/v1/footage')).cameras.filter((c) => c.recording).length;
      if (writing >= n) break;
    }
    if (writing < n) throw new Error(`continuous recording of only ${writing} of ${n} cameras after 60 s`);
  }
  return { n, on, dir, segmentDir, storage, gateway, ca, agent, get, deviceIds: online.sort(), started };
}

async function endPhase(phase: Phase): Promise<void> {
  await phase.gateway.stop();
  phase.agent.destroy();
  rmSync(phase.dir, { recursive: true, force: true });
  rmSync(phase.segmentDir, { recursive: true, force: true });
}

interface CpuWindow {
  node_pct: number;
  /** Standard error of node_pct, from its second-by-second figures (how much the shared machine moved it). */
  node_se_pct: number;
  tree_pct: number;
  machine_busy_pct: number;
  rss_mib: number;
  window_s: number;
}

/** The daemon's CPU over `seconds`, after the warm-up. */
async function measureCpu(phase: Phase): Promise<CpuWindow> {
  await sleep(warmupS * 1000);
  const pid = phase.gateway.pid;
  const c0 = cpuOf(pid);
  const m0 = machineCpu();
  const t0 = performance.now();
  let rss = 0;
  const perSecond: number[] = [];
  for (let s = 0, last = c0.own, lastT = t0; s < seconds; s++) {
    await sleep(1000);
    const own = ownCpu(pid);
    const now = performance.now();
    perSecond.push(((own - last) / ((now - lastT) / 1000)) * 100);
    [last, lastT] = [own, now];
    rss = Math.max(rss, rssMiB(pid));
  }
  const c1 = cpuOf(pid);
  const mean = perSecond.reduce((a, b) => a + b, 0) / Math.max(1, perSecond.length);
  const variance = perSecond.reduce((a, x) => a + (x - mean) ** 2, 0) / Math.max(1, perSecond.length - 1);
  const m1 = machineCpu();
  const elapsed = (performance.now() - t0) / 1000;
  return {
    node_pct: round(((c1.own - c0.own) / elapsed) * 100, 2),
    node_se_pct: round(Math.sqrt(variance / Math.max(1, perSecond.length)), 2),
    tree_pct: round(((c1.tree - c0.tree) / elapsed) * 100, 2),
    machine_busy_pct: Math.round(((m1.busy - m0.busy) / (m1.total - m0.total)) * 100),
    rss_mib: Math.round(rss),
    window_s: round(elapsed, 1),
  };
}

// --- what the "on" run wrote -----------------------------------------------------------------------

interface IndexFigures {
  rows: number;
  /** Seconds of footage the rows cover, all cameras together. */
  footage_s: number;
  /** Bytes a row and its index entries take on their pages. */
  bytes_per_row: number;
  /** Fragment table bytes per second of footage. */
  fragment_table_bytes_per_s: number;
  /** At this run's file_s, and at the default 60 s. */
  bytes_per_camera_day: number;
  bytes_per_camera_day_at_60s: number;
}

/** The footage index's size, from the gateway's database once it stopped (dbstat: bytes used on each page). */
function indexFigures(dbFile: string): IndexFigures | null {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    const t = db
      .prepare<[], { rows: number; fragments: number; ms: number }>(
        'SELECT count(*) AS rows, coalesce(sum(length(fragments)), 0) AS fragments, coalesce(sum(end_ms - start_ms), 0) AS ms FROM footage_files',
      )
      .get();
    if (!t || t.rows === 0 || t.ms === 0) return null;
    const used =
      db
        .prepare<[], { used: number }>(
          "SELECT coalesce(sum(pgsize - unused), 0) AS used FROM dbstat WHERE name IN ('footage_files', 'footage_files_device_start', 'footage_files_start') OR name LIKE 'sqlite_autoindex_footage_files%'",
        )
        .get()?.used ?? 0;
    const fixedPerRow = (used - t.fragments) / t.rows;
    const fragmentsPerS = t.fragments / (t.ms / 1000);
    const day = (rowS: number) => Math.round(fixedPerRow * (86_400 / rowS) + fragmentsPerS * 86_400);
    return {
      rows: t.rows,
      footage_s: round(t.ms / 1000, 1),
      bytes_per_row: Math.round(used / t.rows),
      fragment_table_bytes_per_s: round(fragmentsPerS, 2),
      bytes_per_camera_day: day(fileS),
      bytes_per_camera_day_at_60s: day(60),
    };
  } finally {
    db.close();
  }
}

interface OnFigures {
  /** Seconds of footage per camera (the index's, over N). */
  footage_s: number;
  received_kbps_per_camera: number;
  bytes_received: number;
  bytes_on_disk: number;
  written_per_received: number;
  files: number;
  index_commits: number;
  files_per_camera_hour: number;
  index_commits_per_hour: number;
  index_commits_per_camera_hour: number;
  fsyncs_per_camera_hour: number;
  most_commits_expected: number;
  dropped_fragments: number;
  /** New runs because a camera's media time and the gateway's clock parted (each starts a file). */
  resyncs: number;
  index: IndexFigures | null;
}

/**
 * The end of an "on" run: the cameras stopped (nothing more comes in), the counters read, the gateway
 * stopped (it writes what it holds and commits the index), then the files and the database measured.
 * Rates per camera-hour are over the footage the index holds (each camera's from its own start); the
 * commits per hour over the gateway's run.
 */
async function finishOn(phase: Phase, stopFleet: () => Promise<void>): Promise<OnFigures> {
  await stopFleet();
  await sleep(1500);
  const text = await metricsText(phase.gateway);
  const runS = (performance.now() - phase.started) / 1000;
  const read = (series: string) => metric(text, series) ?? NaN;
  const received = read('edge_gateway_footage_bytes_received_total');
  const files = read('edge_gateway_footage_files_written_total');
  const commits = read('edge_gateway_footage_index_flush_seconds_count');
  const dropped = read('edge_gateway_footage_fragments_dropped_total');
  const resyncs = read('edge_gateway_footage_resyncs_total');
  await phase.gateway.stop();
  const onDisk = filesUnder(phase.storage).reduce((sum, f) => sum + f.size, 0);
  const index = indexFigures(path.join(phase.dir, 'data', 'gateway.db'));
  const cameraS = index?.footage_s ?? NaN;
  const cameraH = cameraS / 3600;
  return {
    footage_s: round(cameraS / phase.n, 1),
    received_kbps_per_camera: round((received * 8) / 1000 / cameraS, 1),
    bytes_received: received,
    bytes_on_disk: onDisk,
    written_per_received: round(onDisk / received, 4),
    files,
    index_commits: commits,
    files_per_camera_hour: round(files / cameraH, 1),
    index_commits_per_hour: round(commits / (runS / 3600), 1),
    index_commits_per_camera_hour: round(commits / cameraH, 1),
    fsyncs_per_camera_hour: round((files + commits) / cameraH, 1),
    // The index is committed every flush_s from the gateway's start, when files are waiting.
    most_commits_expected: Math.floor(runS / flushS) + 1,
    dropped_fragments: dropped,
    resyncs,
    index,
  };
}

// --- scrub, playback, export -----------------------------------------------------------------------

interface Timed {
  status: number;
  ms: number;
  bytes: number;
  pictureTime: string | undefined;
}

/** One GET on the gateway's API with a token: status, time to the last byte, bytes, X-Picture-Time. */
function timedGet(phase: Phase, p: string, token: string, agent: Agent = phase.agent): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(
      new URL(p, phase.gateway.apiUrl),
      { ca: phase.ca, servername: 'localhost', agent, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        let bytes = 0;
        res.on('data', (d: Buffer) => (bytes += d.length));
        res.on('error', reject);
        res.on('end', () => {
          const picture = res.headers['x-picture-time'];
          resolve({
            status: res.statusCode ?? 0,
            ms: performance.now() - t0,
            bytes,
            pictureTime: typeof picture === 'string' ? picture : undefined,
          });
        });
      },
    );
    req.on('error', reject).end();
  });
}

interface FootageWindow {
  deviceId: string;
  startMs: number;
  endMs: number;
}

/** The footage of the first camera indexed so far (waited for: a file is indexed once closed and flushed). */
async function footageWindow(phase: Phase): Promise<FootageWindow> {
  const deviceId = phase.deviceIds[0];
  if (!deviceId) throw new Error('no camera');
  const deadline = performance.now() + (fileS + flushS + 60) * 1000;
  for (;;) {
    const now = Date.now();
    const spans = (
      await phase.get(
        SpanPage,
        `/v1/devices/${deviceId}/footage?start=${iso(now - 3_600_000)}&end=${iso(now + 60_000)}`,
      )
    ).data;
    const first = spans[0];
    const last = spans.at(-1);
    if (first && last && Date.parse(last.end) - Date.parse(first.start) >= Math.min(fileS, 10) * 1000)
      return { deviceId, startMs: Date.parse(first.start), endMs: Date.parse(last.end) };
    if (performance.now() > deadline)
      throw new Error(`no footage of ${deviceId} indexed after file_s + flush_s + 60 s`);
    await sleep(1000);
  }
}

const p50 = (xs: readonly number[]) => (xs.length ? Math.round(percentile(xs, 50)) : null);
const p95 = (xs: readonly number[]) => (xs.length ? Math.round(percentile(xs, 95)) : null);

interface ScrubFigures {
  moments: number;
  first_n: number;
  first_p50_ms: number | null;
  first_p95_ms: number | null;
  kept_n: number;
  kept_p50_ms: number | null;
  kept_p95_ms: number | null;
}

/** Pictures of random moments, each asked twice: the first answer for a picture (decoded), then kept ones. */
async function scrub(phase: Phase, w: FootageWindow, token: string): Promise<ScrubFigures> {
  const moments = Array.from({ length: scrubMoments }, () => Math.floor(w.startMs + random() * (w.endMs - w.startMs)));
  const first: number[] = [];
  const kept: number[] = [];
  const seen = new Set<string>();
  for (let pass = 0; pass < 2; pass++) {
    for (const at of moments) {
      const r = await timedGet(phase, `/v1/devices/${w.deviceId}/footage/frame?at=${iso(at)}&width=320`, token);
      if (r.status !== 200) throw new Error(`footage/frame at ${iso(at)} answered ${r.status}`);
      const picture = r.pictureTime ?? '';
      (seen.has(picture) ? kept : first).push(r.ms);
      seen.add(picture);
    }
  }
  return {
    moments: moments.length,
    first_n: first.length,
    first_p50_ms: p50(first),
    first_p95_ms: p95(first),
    kept_n: kept.length,
    kept_p50_ms: p50(kept),
    kept_p95_ms: p95(kept),
  };
}

/**
 * A trial in the page (hls.js loaded): the clock starts before the GET of the playback address (with
 * the token, as the web app asks), then hls.js plays it; it stops at the first frame presented.
 */
const PLAYBACK_TRIAL = `async ({ path, token }) => {
  const video = document.createElement('video');
  video.muted = true;
  video.playsInline = true;
  document.body.append(video);
  const t0 = performance.now();
  const res = await fetch(path, { headers: { authorization: 'Bearer ' + token } });
  if (res.status !== 200) throw new Error('playback answered ' + res.status + ' ' + (await res.text()));
  const { playback_url: url } = await res.json();
  const answerMs = performance.now() - t0;
  const hls = new Hls();
  let fatal = null;
  hls.on(Hls.Events.ERROR, (_e, d) => { if (d.fatal) fatal = d.details; });
  hls.on(Hls.Events.MANIFEST_PARSED, () => video.play().catch(() => undefined));
  const first = new Promise((resolve) => video.requestVideoFrameCallback(() => resolve(performance.now() - t0)));
  hls.loadSource(url);
  hls.attachMedia(video);
  const firstFrameMs = await Promise.race([first, new Promise((_, reject) => setTimeout(() => reject(new Error('hls.js: ' + (fatal ?? 'no frame in 20 s'))), 20000))]);
  hls.destroy();
  return { answerMs, firstFrameMs };
}`;
const PlaybackTrial = Type.Object({ answerMs: Type.Number(), firstFrameMs: Type.Number() });

interface PlaybackFigures {
  trials: Array<{ from: string; answer_ms?: number; first_frame_ms?: number; failed?: string }>;
  first_frame_p50_ms: number | null;
  first_frame_max_ms: number | null;
  failed: number;
}

/** First frames of playback windows starting at random seconds, in chromium with hls.js. */
async function playback(phase: Phase, w: FootageWindow, token: string): Promise<PlaybackFigures> {
  const hlsJs = readFileSync(createRequire(import.meta.url).resolve('hls.js/dist/hls.min.js'), 'utf8');
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--disable-background-networking'],
  });
  const trials: PlaybackFigures['trials'] = [];
  try {
    // bypassCSP: hls.js goes into a page of the gateway's origin, whose CSP allows only its own scripts.
    const context = await browser.newContext({ ignoreHTTPSErrors: true, bypassCSP: true });
    const seconds = Math.max(1, Math.floor((w.endMs - w.startMs) / 1000) - 5);
    for (let i = 0; i < playbackTrials; i++) {
      const from = w.startMs + Math.floor(random() * seconds) * 1000;
      const to = Math.min(w.endMs, from + 60_000);
      const page = await context.newPage();
      // The gateway's own origin, as the web app's: the playlist and its files are same-origin.
      await page.goto(new URL('/live/', phase.gateway.apiUrl).href);
      await page.addScriptTag({ content: hlsJs });
      const arg = { path: `/v1/devices/${w.deviceId}/footage/playback?start=${iso(from)}&end=${iso(to)}`, token };
      trials.push(
        await page
          .evaluate(`(${PLAYBACK_TRIAL})(${JSON.stringify(arg)})`)
          .then((value) => {
            const r = narrow(PlaybackTrial, value, 'a playback trial');
            return { from: iso(from), answer_ms: Math.round(r.answerMs), first_frame_ms: Math.round(r.firstFrameMs) };
          })
          .catch((err: Error) => ({ from: iso(from), failed: (err.message.split('\n')[0] ?? '').slice(0, 200) })),
      );
      await page.close();
    }
  } finally {
    await browser.close();
  }
  const firsts = trials.flatMap((t) => (t.first_frame_ms === undefined ? [] : [t.first_frame_ms]));
  return {
    trials,
    first_frame_p50_ms: p50(firsts),
    first_frame_max_ms: firsts.length ? Math.max(...firsts) : null,
    failed: trials.length - firsts.length,
  };
}

interface ExportFigures {
  window_s: number;
  /** One download of the window. */
  bytes: number;
  downloads: number;
  first_download_s: number;
  mb_per_s: number;
  /** cat of the same files, read over and over (its start alone would decide a small window). */
  cat_bytes: number;
  cat_mb_per_s: number;
  rss_min_mib: number;
  rss_max_mib: number;
  rss_growth_mib: number;
}

/** Least time spent downloading, and least bytes cat reads: a window of a few MB takes milliseconds. */
const EXPORT_MIN_S = 2;
const CAT_MIN_BYTES = 256e6;

/** Reads the files with one cat to /dev/null, the list repeated `times` times; seconds it took. */
async function catSeconds(files: readonly string[], times: number): Promise<number> {
  const devNull = openSync('/dev/null', 'w');
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    const cat = spawn('cat', Array.from({ length: times }, () => files).flat(), {
      stdio: ['ignore', devNull, 'inherit'],
    });
    cat.on('error', reject).on('close', (code) => (code === 0 ? resolve() : reject(new Error(`cat exited ${code}`))));
  }).finally(() => closeSync(devNull));
  return (performance.now() - t0) / 1000;
}

/**
 * The whole window of one camera downloaded (again, on a new connection each time as a browser's
 * download, for EXPORT_MIN_S at least), against cat of its files; the daemon's RSS meanwhile.
 */
async function exportWindow(phase: Phase, w: FootageWindow): Promise<ExportFigures> {
  const pid = phase.gateway.pid;
  const token = phase.gateway.token('recordings:write');
  const url = `/v1/devices/${w.deviceId}/footage/download?start=${iso(w.startMs)}&end=${iso(w.endMs)}`;
  const rss = [rssMiB(pid)];
  const sampler = setInterval(() => rss.push(rssMiB(pid)), 10);
  const downloads: Timed[] = [];
  try {
    const t0 = performance.now();
    while (downloads.length === 0 || performance.now() - t0 < EXPORT_MIN_S * 1000) {
      const agent = new Agent({ keepAlive: false });
      const r = await timedGet(phase, url, token, agent).finally(() => agent.destroy());
      if (r.status !== 200) throw new Error(`footage/download answered ${r.status}`);
      downloads.push(r);
    }
  } finally {
    clearInterval(sampler);
  }
  const first = downloads[0] as Timed;
  // The files the window was made from: the camera's, started before its end (not the one open now).
  const files = filesUnder(path.join(phase.storage, w.deviceId)).filter((f) => {
    const m = /-(\d+)\.mp4$/.exec(f.path);
    return m !== null && Number(m[1]) < w.endMs;
  });
  const catBytes = files.reduce((sum, f) => sum + f.size, 0);
  const times = Math.max(1, Math.ceil(CAT_MIN_BYTES / Math.max(1, catBytes)));
  const catS = await catSeconds(
    files.map((f) => f.path),
    times,
  );
  const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
  return {
    window_s: round((w.endMs - w.startMs) / 1000, 1),
    bytes: first.bytes,
    downloads: downloads.length,
    first_download_s: round(first.ms / 1000, 3),
    mb_per_s: round(sum(downloads.map((d) => d.bytes)) / 1e6 / (sum(downloads.map((d) => d.ms)) / 1000), 1),
    cat_bytes: catBytes,
    cat_mb_per_s: round((catBytes * times) / 1e6 / catS, 1),
    rss_min_mib: round(Math.min(...rss), 1),
    rss_max_mib: round(Math.max(...rss), 1),
    rss_growth_mib: round(Math.max(...rss) - Math.min(...rss), 1),
  };
}

interface Extras {
  cameras: number;
  window?: { device_id: string; start: string; end: string; seconds: number };
  scrub?: ScrubFigures;
  playback?: PlaybackFigures;
  export?: ExportFigures;
  error?: string;
}

async function runExtras(phase: Phase): Promise<Extras> {
  const extras: Extras = { cameras: phase.n };
  try {
    step(`${phase.n} cameras: waiting for indexed footage`);
    const w = await footageWindow(phase);
    extras.window = {
      device_id: w.deviceId,
      start: iso(w.startMs),
      end: iso(w.endMs),
      seconds: round((w.endMs - w.startMs) / 1000, 1),
    };
    const token = phase.gateway.token('recordings:read');
    step(`${phase.n} cameras: scrub`);
    extras.scrub = await scrub(phase, w, token);
    step(`${phase.n} cameras: playback in chromium`);
    extras.playback = await playback(phase, w, token);
    step(`${phase.n} cameras: export`);
    extras.export = await exportWindow(phase, w);
  } catch (err) {
    extras.error = err instanceof Error ? err.message : String(err);
  }
  return extras;
}

// --- all N ---------------------------------------------------------------------------------------

interface Row extends Partial<OnFigures> {
  cameras: number;
  off?: CpuWindow;
  on?: CpuWindow;
  /** (on - off) / N, % of a core. */
  node_per_camera_pct?: number;
  /** Its standard error (the two runs' combined, per camera). */
  node_per_camera_se_pct?: number;
  tree_per_camera_pct?: number;
  error?: string;
}

/** One N: the cameras, the gateway without continuous recording, then with it. */
async function benchCameras(n: number, disk: FootageDisk): Promise<{ row: Row; extras: Extras | null }> {
  const row: Row = { cameras: n };
  let extras: Extras | null = null;
  let fleet: Fleet | null = null;
  const stopFleet = async () => {
    const f = fleet;
    fleet = null;
    await f?.stop();
  };
  try {
    fleet = await startBenchFleet({ count: n, mainKbps: MAIN_KBPS, looped: true });
    step(`${n} cameras: continuous recording off`);
    const off = await startPhase(n, fleet, false, disk);
    try {
      row.off = await measureCpu(off);
    } finally {
      await endPhase(off);
    }
    step(`${n} cameras: continuous recording on`);
    const on = await startPhase(n, fleet, true, disk);
    try {
      row.on = await measureCpu(on);
      row.node_per_camera_pct = round((row.on.node_pct - row.off.node_pct) / n, 3);
      row.node_per_camera_se_pct = round(Math.hypot(row.on.node_se_pct, row.off.node_se_pct) / n, 3);
      row.tree_per_camera_pct = round((row.on.tree_pct - row.off.tree_pct) / n, 3);
      if (n === extrasAt) extras = await runExtras(on);
      Object.assign(row, await finishOn(on, stopFleet));
    } finally {
      await endPhase(on);
    }
  } catch (err) {
    row.error = err instanceof Error ? err.message : String(err);
  } finally {
    await stopFleet();
    rmSync(path.join(disk.dir, `n${n}`), { recursive: true, force: true });
  }
  return { row, extras };
}

const disk = await footageDisk();
const tBench = performance.now();
const rows: Row[] = [];
let extras: Extras | null = null;
try {
  for (const n of counts) {
    const result = await benchCameras(n, disk);
    rows.push(result.row);
    extras ??= result.extras;
    step(`${n} cameras done (${Math.round((performance.now() - tBench) / 1000)} s): ${JSON.stringify(result.row)}`);
  }
} finally {
  await disk.release();
}
const benchS = Math.round((performance.now() - tBench) / 1000);

// --- report ----------------------------------------------------------------------------------------

const cell = (v: string | number | null | undefined, w: number) => String(v ?? '-').padStart(w);
const cpuModel = os.cpus()[0]?.model ?? 'unknown';
console.log(
  `\nbench continuous: N simulated 1080p15 H.264 cameras at ${MAIN_KBPS} kbit/s with 320x180 sub streams (1 s GOP, looped, loopback); ` +
    `the sub stream kept on ${disk.tmpfs ? 'a tmpfs' : 'the system disk'}; file_s ${fileS}, flush_s ${flushS}; ${seconds} s measured per run after ${warmupS} s; ` +
    `node ${process.version}, ${os.cpus().length} cores (${cpuModel}), ${benchS} s in all\n`,
);
console.log(
  '| cameras | CPU off: node (tree) % | CPU on: node (tree) % | on − off per camera: node ± s.e. (tree) % | machine busy off / on % | kept kbit/s per camera | written / received | fsyncs per camera-h (files) | index commits per h (per camera-h) | files per commit | index B per camera-day (at 60 s files) |',
);
console.log(
  '|--------:|-----------------------:|----------------------:|-----------------------------------------:|------------------------:|-----------------------:|-------------------:|----------------------------:|-----------------------------------:|-----------------:|---------------------------------------:|',
);
for (const r of rows) {
  if (!r.off || !r.on) {
    console.log(`| ${cell(r.cameras, 7)} | failed: ${r.error ?? 'unknown'} |`);
    continue;
  }
  const perCommit = r.files !== undefined && r.index_commits ? round(r.files / r.index_commits, 1) : null;
  console.log(
    `| ${cell(r.cameras, 7)} | ${cell(`${r.off.node_pct} (${r.off.tree_pct})`, 22)} | ${cell(`${r.on.node_pct} (${r.on.tree_pct})`, 21)} | ` +
      `${cell(`${r.node_per_camera_pct} ± ${r.node_per_camera_se_pct} (${r.tree_per_camera_pct})`, 40)} | ${cell(`${r.off.machine_busy_pct} / ${r.on.machine_busy_pct}`, 23)} | ` +
      `${cell(r.received_kbps_per_camera, 22)} | ${cell(r.written_per_received, 18)} | ${cell(`${r.fsyncs_per_camera_hour} (${r.files_per_camera_hour})`, 27)} | ` +
      `${cell(`${r.index_commits_per_hour} (${r.index_commits_per_camera_hour})`, 34)} | ${cell(perCommit, 16)} | ` +
      `${cell(r.index ? `${r.index.bytes_per_camera_day} (${r.index.bytes_per_camera_day_at_60s})` : null, 38)} |`,
  );
}
for (const r of rows) {
  if (r.files === undefined) continue;
  console.log(
    `\n${r.cameras} cameras, on: ${r.footage_s} s of footage per camera; ${r.bytes_on_disk} bytes on the footage disk for ${r.bytes_received} bytes of RTP payload read; ` +
      `${r.files} files (one fsync each) and ${r.index_commits} index commits (one fsync of the WAL each; at most ${r.most_commits_expected} expected at flush_s ${flushS}); ` +
      `${r.dropped_fragments} groups of pictures dropped; ${r.resyncs} runs started anew (clocks parted); index: ${r.index ? `${r.index.rows} rows, ${r.index.bytes_per_row} B a row with its index entries, ${r.index.fragment_table_bytes_per_s} B/s of fragment table` : 'no rows'}`,
  );
}
if (extras) {
  console.log(
    `\nat ${extras.cameras} cameras, the footage recorded during the run (a day cannot be waited for): ${extras.window ? `${extras.window.seconds} s of ${extras.window.device_id}` : '-'}`,
  );
  const s = extras.scrub;
  if (s)
    console.log(
      `scrub (footage/frame, width=320), ${s.moments} random moments asked twice: first answer for a picture p50 ${s.first_p50_ms} ms, p95 ${s.first_p95_ms} ms (${s.first_n}); ` +
        `kept p50 ${s.kept_p50_ms} ms, p95 ${s.kept_p95_ms} ms (${s.kept_n})`,
    );
  const p = extras.playback;
  if (p)
    console.log(
      `playback in chromium (hls.js), GET …/footage/playback → first frame presented: p50 ${p.first_frame_p50_ms} ms, max ${p.first_frame_max_ms} ms over ${p.trials.length} trials (${p.failed} failed): ` +
        p.trials
          .map((t) => (t.failed ? `failed (${t.failed})` : `${t.first_frame_ms} ms (answer ${t.answer_ms} ms)`))
          .join(', '),
    );
  const e = extras.export;
  if (e)
    console.log(
      `export of the whole window (${e.window_s} s): ${e.bytes} bytes, the first download in ${e.first_download_s} s; ${e.downloads} downloads at ${e.mb_per_s} MB/s; cat of its ${e.cat_bytes} bytes of files (read over and over): ${e.cat_mb_per_s} MB/s; ` +
        `daemon RSS during it ${e.rss_min_mib}–${e.rss_max_mib} MiB (max − min ${e.rss_growth_mib} MiB)`,
    );
  if (extras.error) console.log(`extras failed: ${extras.error}`);
}
const notes = [
  ...(disk.note ? [disk.note] : []),
  ...rows.flatMap((r) => (r.error ? [`${r.cameras} cameras: ${r.error}`] : [])),
];
if (notes.length) console.log(`\nnotes:\n${notes.map((x) => `  - ${x}`).join('\n')}`);

const measured = rows.filter((r) => r.node_per_camera_pct !== undefined);
const finished = rows.filter((r) => r.written_per_received !== undefined);
const allRows = <T>(xs: T[], ok: (x: T) => boolean) => xs.length === rows.length && xs.every(ok);
const goals = {
  cpu_le_0_5pct_per_camera: allRows(measured, (r) => (r.node_per_camera_pct ?? Infinity) <= CPU_GOAL_PCT),
  written_per_received_le_1_02: allRows(finished, (r) => (r.written_per_received ?? Infinity) <= RATIO_GOAL),
  index_commits_independent_of_files: allRows(
    finished,
    (r) => (r.index_commits ?? Infinity) <= (r.most_commits_expected ?? 0) && (r.files ?? 0) >= r.cameras,
  ),
  scrub_kept_p95_le_300ms: extras?.scrub?.kept_p95_ms == null ? null : extras.scrub.kept_p95_ms <= SCRUB_GOAL_MS,
  playback_first_frame_le_1s:
    extras?.playback?.first_frame_max_ms == null
      ? null
      : extras.playback.failed === 0 && extras.playback.first_frame_max_ms <= PLAYBACK_GOAL_MS,
};
console.log(
  `\ngoals: <= ${CPU_GOAL_PCT} % of a core per camera on top: ${goals.cpu_le_0_5pct_per_camera}; written / received <= ${RATIO_GOAL}: ${goals.written_per_received_le_1_02}; ` +
    `index commits independent of files: ${goals.index_commits_independent_of_files}; scrub p95 <= ${SCRUB_GOAL_MS} ms once kept: ${goals.scrub_kept_p95_le_300ms}; ` +
    `playback first frame <= ${PLAYBACK_GOAL_MS} ms (every trial): ${goals.playback_first_frame_le_1s}\n`,
);
console.log(
  JSON.stringify({
    bench: 'continuous',
    seconds,
    warmup_s: warmupS,
    file_s: fileS,
    flush_s: flushS,
    seed,
    main_kbps: MAIN_KBPS,
    footage_disk: disk.tmpfs ? 'tmpfs' : 'system disk (allow_on_system_disk)',
    cores: os.cpus().length,
    cpu_model: cpuModel,
    bench_s: benchS,
    rows,
    extras,
    goals,
  }),
);
process.exit(0);
