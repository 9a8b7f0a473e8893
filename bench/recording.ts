// Benchmark: the recorder's standing cost and its event-to-clip latency. For N simulated 1080p H.264
// cameras at about 4 Mbit/s (15 frames/s, a keyframe every second, no B-frames; the simulator loops a
// clip encoded once with -c copy, so the source costs little), the gateway runs as its own process
// with those cameras configured, its recorders reading each camera's main stream from the relay in
// process into fMP4 segments in RAM (recording.segment_dir, under /dev/shm here).
//
// Per N, once every camera is online and every recorder writes segments, and after a settling
// pause, over BENCH_SECONDS with no event and no API call:
//  - CPU of the gateway process and all its descendants (ffmpeg children, if any), as % of one core,
//    per camera: utime+stime of every process in the tree, plus cutime+cstime (children that ended
//    and were reaped count in their parent's), as deltas. Node and ffmpeg are also shown apart, and
//    a least-squares line over the rows splits what each camera adds from the daemon's fixed cost.
//  - the daemon's RSS (node alone) and the ffmpeg children's PSS (shared libraries counted once).
//  - bytes in storage_dir (must stay 0 without events) and that per hour; bytes the tree wrote to
//    block devices (/proc/PID/io write_bytes: SQLite, logs; tmpfs writes do not count) per hour, and
//    which files on disk changed. The health checks write in rounds (every health_interval_s, 30 s
//    by default), so a window shorter than that may or may not hold one: use BENCH_SECONDS >= 30
//    when that figure matters.
//  - RAM the segments take in segment_dir, segments per second per camera and segmenter restarts.
//  - for context on this shared machine: the simulator's CPU, how busy both cores were, and any
//    process of the test seen stopped (state T: someone else's `pkill -STOP` would freeze it).
// Then, for the smallest and the largest N, motion events on camera 0 (the simulator triggers them;
// the gateway sees them through its ONVIF PullPoint subscription), BENCH_EVENT_TRIALS of them: each
// held about BENCH_EVENT_S and stopped at a set phase of the camera's GOP ((i + 0.5) / trials after
// a keyframe reached the recorder), so the wait for the keyframe after the clip's end is sampled
// evenly. The time from the stop to the clip being listed by GET /v1/devices/{id}/recordings (polled
// every 100 ms) is compared with post_roll_s (goal <= post_roll_s + 2 s, every trial), with the
// steps on the way seen from the files (the end's group of pictures written, assembly, rename,
// thumbnail). The last clip is
// then checked with ffprobe (length) and decoded once (errors counted), after the timing.
//
// Software motion detection is off (recording.motion.mode: off): it would decode every camera's sub
// stream, a separate cost, and the test picture moves all the time.
// Env: BENCH_CAMERAS (default 1,4,8,16), BENCH_SECONDS (default 20), BENCH_SETTLE_S (default 5),
// BENCH_EVENT_S (default 3), BENCH_EVENT_TRIALS (default 3), BENCH_EVENT_CAMERAS (the N values with
// the event step; default the smallest and the largest), BENCH_NODE_ARGS (flags for the gateway's
// node, split on spaces: `--cpu-prof --cpu-prof-dir=DIR` profiles the daemon). Needs ffmpeg, ffprobe and the
// simulator's
// packages (see ./run). About 4 minutes with the defaults.
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { pino } from 'pino';
import Type, { type TSchema } from 'typebox';
import type { Fleet } from '../dist/onvif/simulator/fleet.js';
import { cameraEntries, cameraOf, startBenchFleet } from './support/fleet.ts';
import { getJson, onLogEntries, startGatewayProcess, type GatewayProcess } from './support/gateway-process.ts';
import { AlertPage, DevicePage, parseAs, RecordingPage, type Device, type Recording } from './support/json.ts';
import { procStat } from './support/proc.ts';
import { upperMedian } from './support/stats.ts';

const counts = (process.env.BENCH_CAMERAS ?? '1,4,8,16').split(',').map(Number);
const seconds = Number(process.env.BENCH_SECONDS ?? 20);
const settleS = Number(process.env.BENCH_SETTLE_S ?? 5);
const eventHoldS = Number(process.env.BENCH_EVENT_S ?? 3);
const eventTrials = Number(process.env.BENCH_EVENT_TRIALS ?? 3);
// The event step for the smallest and the largest N by default (it adds about 15 s per trial).
const eventCounts = process.env.BENCH_EVENT_CAMERAS
  ? process.env.BENCH_EVENT_CAMERAS.split(',').map(Number)
  : [Math.min(...counts), Math.max(...counts)];
const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const PRE_ROLL_S = 5;
const POST_ROLL_S = 5;
const MAIN_KBPS = 4000;
/** The simulated cameras' keyframe interval (looped.gopS below). */
const GOP_MS = 1000;
const logger = pino({ level: 'silent' });
const run = promisify(execFile);
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
const PAGE = Number(execFileSync('getconf', ['PAGESIZE'], { encoding: 'utf8' }).trim()) || 4096;
const round1 = (x: number) => Math.round(x * 10) / 10;
const round2 = (x: number) => Math.round(x * 100) / 100;

// --- /proc ---------------------------------------------------------------------------------------

interface ProcEntry {
  ppid: number;
  state: string;
  /** Own utime + stime, s. */
  cpu: number;
  /** Its reaped children's (cutime + cstime), s. */
  reaped: number;
  rssBytes: number;
  comm: string;
}
type ProcTable = Map<number, ProcEntry>;

/** Every process: pid → { ppid, state, cpu (own utime+stime, s), reaped (cutime+cstime, s), rssBytes, comm }. */
function procTable(): ProcTable {
  const table: ProcTable = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat;
    try {
      stat = procStat(Number(name));
    } catch {
      continue; // ended while listed
    }
    const f = stat.fields;
    table.set(Number(name), {
      comm: stat.comm,
      state: f[0] ?? '',
      ppid: Number(f[1]),
      cpu: (Number(f[11]) + Number(f[12])) / CLK_TCK,
      reaped: (Number(f[13]) + Number(f[14])) / CLK_TCK,
      rssBytes: Number(f[21]) * PAGE,
    });
  }
  return table;
}

/** root and all its descendants in `table`. */
function tree(table: ProcTable, root: number, exclude = new Set<number>()): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, p] of table) children.set(p.ppid, [...(children.get(p.ppid) ?? []), pid]);
  const out: number[] = [];
  const stack = [root];
  for (let pid = stack.pop(); pid !== undefined; pid = stack.pop()) {
    if (!table.has(pid) || exclude.has(pid)) continue;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

/**
 * CPU seconds of a tree so far: each living process's own time plus what its reaped children used.
 * A child that ends between two readings moves from its own entry into its parent's cutime, so
 * deltas count it once.
 */
const treeCpu = (table: ProcTable, pids: readonly number[]) =>
  pids.reduce((a, pid) => a + (table.get(pid)?.cpu ?? 0) + (table.get(pid)?.reaped ?? 0), 0);

/**
 * The sum over `pids` of a number in one of their /proc files (`pattern`'s first group × `scale`); a process that ended
 * counts 0.
 */
function sumOfProcFiles(pids: readonly number[], file: string, pattern: RegExp, scale = 1): number {
  let sum = 0;
  for (const pid of pids) {
    try {
      sum += Number(pattern.exec(readFileSync(`/proc/${pid}/${file}`, 'utf8'))?.[1] ?? 0) * scale;
    } catch {
      // ended
    }
  }
  return sum;
}
const ioWriteBytes = (pids: readonly number[]) => sumOfProcFiles(pids, 'io', /^write_bytes:\s+(\d+)/m);
const pssBytes = (pids: readonly number[]) => sumOfProcFiles(pids, 'smaps_rollup', /^Pss:\s+(\d+) kB/m, 1024);

/** All cores: busy and total jiffies (to say how loaded the shared machine was). */
function machineCpu() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3]! + f[4]!;
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

function walkFiles(dir: string): { path: string; size: number }[] {
  const out: { path: string; size: number }[] = [];
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...walkFiles(full));
    else {
      try {
        out.push({ path: full, size: statSync(full).size });
      } catch {
        // pruned while listed
      }
    }
  }
  return out;
}
const bytesIn = (dir: string) => walkFiles(dir).reduce((a, f) => a + f.size, 0);

interface SegmentProgress {
  run: number;
  index: number;
  files: number;
}

/** Per device: the newest segmenter run and segment number seen in its segment directory (`r<run>-<n>.mp4`). */
function segmentProgress(segmentDir: string, deviceIds: readonly string[]): Map<string, SegmentProgress> {
  const out = new Map<string, SegmentProgress>();
  for (const id of deviceIds) {
    let run = 0;
    let index = -1;
    let files = 0;
    for (const f of walkFiles(path.join(segmentDir, id))) {
      const m = /r(\d+)-(\d+)\.mp4$/.exec(f.path);
      if (!m) continue;
      files++;
      const r = Number(m[1]);
      const i = Number(m[2]);
      if (r > run || (r === run && i > index)) [run, index] = [r, i];
    }
    out.set(id, { run, index, files });
  }
  return out;
}

/** A motion event on camera 0 and the clip it leaves (seconds after its nominal end at which each step was seen). */
interface EventTrial {
  gop_phase: number;
  alert_ms?: number | null;
  held_s?: number;
  clip_ready_s?: number | null;
  steps_after_end_s?: Record<
    'end_group_written' | 'assembly_started' | 'clip_renamed' | 'thumbnail' | 'listed',
    number | null
  >;
  clip_end_after_stop_s?: number;
  clip_listed_duration_s?: number;
  clip_bytes?: number;
}

/** One N's figures (a failed step leaves the later ones out and says why in `error`). */
interface Row {
  cameras: number;
  fleet_start_s?: number;
  online?: number;
  all_online_s?: number;
  recording?: number;
  all_recording_s?: number;
  cpu_total_pct?: number;
  cpu_per_camera_pct?: number;
  cpu_node_pct?: number;
  cpu_ffmpeg_pct?: number;
  ffmpeg_processes?: number;
  rss_mib?: number;
  rss_max_mib?: number;
  ffmpeg_pss_mib?: number;
  storage_bytes_window?: number;
  storage_bytes_end?: number;
  storage_bytes_per_hour?: number;
  disk_write_bytes_per_hour?: number;
  disk_write_bytes_per_hour_node?: number;
  disk_files_changed?: string[];
  segment_ram_mib?: number;
  segment_ram_per_camera_mib?: number;
  segments_per_camera_s?: number;
  segmenter_restarts?: number;
  sim_cpu_pct?: number;
  machine_busy_pct?: number;
  warnings_in_window?: number;
  stopped_processes?: string[];
  window_s?: number;
  event_trials?: EventTrial[];
  clip_ready_max_s?: number | null;
  clip_ready_median_s?: number | null;
  alert_max_ms?: number | null;
  storage_bytes_after_events?: number;
  clip_file_duration_s?: number;
  clip_video?: string;
  clip_decode_errors?: number;
  clip_decode_first_error?: string;
  error?: string;
  leftover_ffmpeg?: number;
  warnings?: string[];
}

/** What ffprobe says of a clip (-show_entries format=duration:stream=codec_name,width,height -of json). */
const Probe = Type.Object({
  format: Type.Object({ duration: Type.String() }),
  streams: Type.Array(Type.Object({ codec_name: Type.String(), width: Type.Number(), height: Type.Number() })),
});

// --- one N ---------------------------------------------------------------------------------------

async function benchCameras(n: number, withEvent: boolean): Promise<Row> {
  const row: Row = { cameras: n };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-rec-'));
  const segmentDir = mkdtempSync('/dev/shm/eg-bench-rec-');
  const storageDir = path.join(dir, 'storage');
  mkdirSync(storageDir);
  let fleet: Fleet | null = null;
  let gateway: GatewayProcess | null = null;
  const warnings: { msg: string; detail: unknown }[] = [];
  try {
    const tFleet = performance.now();
    const cameras = (fleet = await startBenchFleet({ count: n, mainKbps: MAIN_KBPS, looped: true, logger }));
    row.fleet_start_s = round1((performance.now() - tFleet) / 1000);
    const configFile = path.join(dir, 'config.yaml');
    writeFileSync(
      configFile,
      `gateway:\n  data_dir: ${dir}/data\napi:\n  host: 127.0.0.1\n  port: 0\nrtsp:\n  host: 127.0.0.1\n  port: 0\n  udp_port: 0\n` +
        `onvif:\n  discovery:\n    enabled: false\ncameras:\n${cameraEntries(cameras, 'bench', (i) => `Bench ${i}`)}` +
        `recording:\n  storage_dir: ${storageDir}\n  segment_dir: ${segmentDir}\n  pre_roll_s: ${PRE_ROLL_S}\n  post_roll_s: ${POST_ROLL_S}\n  motion:\n    mode: 'off'\n` +
        `log:\n  level: info\n`,
    );
    const tGateway = performance.now();
    const gw = (gateway = await startGatewayProcess(configFile, nodeArgs));
    // The gateway's warnings and errors (pino JSON on stdout): restarts and stalls show up here.
    onLogEntries(gw.child, (entry) => {
      if (typeof entry.level === 'number' && entry.level >= 40)
        warnings.push({ msg: String(entry.msg), detail: entry.stderr ?? entry.err ?? null });
    });
    const ca = readFileSync(path.join(dir, 'data/tls/cert.pem'));
    const token = gw.token('devices:read recordings:read alerts:read');
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const api = <T extends TSchema>(schema: T, p: string) => getJson(schema, gw.apiUrl, ca, token, p, agent);

    // All N online.
    let devices: Device[] = [];
    for (const deadline = performance.now() + 90_000; performance.now() < deadline; await sleep(250)) {
      devices = (await api(DevicePage, '/v1/devices?limit=200&status=online')).data;
      if (devices.length >= n) break;
    }
    row.online = devices.length;
    row.all_online_s = round1((performance.now() - tGateway) / 1000);
    if (devices.length < n) throw new Error(`only ${devices.length} of ${n} cameras online after 90 s`);
    const ids = devices.map((d) => d.id);
    // All N recorders writing: two segment files each (the first one is listed once the second begins).
    let progress = segmentProgress(segmentDir, ids);
    for (const deadline = performance.now() + 60_000; performance.now() < deadline; await sleep(250)) {
      progress = segmentProgress(segmentDir, ids);
      if ([...progress.values()].every((p) => p.files >= 2)) break;
    }
    const recording = (row.recording = [...progress.values()].filter((p) => p.files >= 2).length);
    row.all_recording_s = round1((performance.now() - tGateway) / 1000);
    if (recording < n) throw new Error(`only ${recording} of ${n} recorders wrote segments after 60 s`);
    await sleep(settleS * 1000);

    // --- the measurement window: no events, no API calls ---
    const gatewayPid = gw.pid;
    const benchPid = process.pid;
    const t0 = procTable();
    const gw0 = tree(t0, gatewayPid);
    // The simulator: this process's other descendants (RTSP server, looping ffmpegs).
    const simTree = (t: ProcTable) => tree(t, benchPid, new Set([gatewayPid])).filter((pid) => pid !== benchPid);
    const sim0 = simTree(t0);
    /** The gateway's own figures in a table (it runs all along: an error if it is not there). */
    const gatewayIn = (t: ProcTable): ProcEntry => {
      const entry = t.get(gatewayPid);
      if (!entry) throw new Error('the gateway process is gone');
      return entry;
    };
    const cpu0 = { tree: treeCpu(t0, gw0), node: gatewayIn(t0).cpu, sim: treeCpu(t0, sim0) };
    const io0 = ioWriteBytes(gw0);
    const ioNode0 = ioWriteBytes([gatewayPid]);
    const diskFiles = () =>
      new Map(
        walkFiles(dir).map((f) => [
          path.relative(dir, f.path),
          { size: f.size, mtimeMs: statSync(f.path, { throwIfNoEntry: false })?.mtimeMs ?? 0 },
        ]),
      );
    const files0 = diskFiles();
    const storage0 = bytesIn(storageDir);
    const seg0 = segmentProgress(segmentDir, ids);
    const m0 = machineCpu();
    const w0 = performance.now();
    const warn0 = warnings.length;
    let rssMax = 0;
    const stoppedSeen = new Set<string>();
    for (let s = 0; s < seconds; s++) {
      await sleep(1000);
      const t = procTable();
      rssMax = Math.max(rssMax, t.get(gatewayPid)?.rssBytes ?? 0);
      // Another user's `pkill -STOP` (or a stuck child) would freeze part of the test: say so.
      for (const pid of [...tree(t, gatewayPid), ...simTree(t)]) {
        const p = t.get(pid);
        if (p?.state === 'T') stoppedSeen.add(`${pid}:${p.comm}`);
      }
    }
    const t1 = procTable();
    const elapsed = (performance.now() - w0) / 1000;
    const gw1 = tree(t1, gatewayPid);
    const sim1 = simTree(t1);
    const cpu1 = { tree: treeCpu(t1, gw1), node: gatewayIn(t1).cpu, sim: treeCpu(t1, sim1) };
    const io1 = ioWriteBytes(gw1);
    const ioNode1 = ioWriteBytes([gatewayPid]);
    const files1 = diskFiles();
    const storage1 = bytesIn(storageDir);
    const seg1 = segmentProgress(segmentDir, ids);
    const m1 = machineCpu();
    const ffmpegPids = gw1.filter((pid) => pid !== gatewayPid);
    const segmentBytes = bytesIn(segmentDir);

    const pct = (cpuS: number) => (cpuS / elapsed) * 100;
    row.cpu_total_pct = round1(pct(cpu1.tree - cpu0.tree));
    row.cpu_per_camera_pct = round2(pct(cpu1.tree - cpu0.tree) / n);
    row.cpu_node_pct = round1(pct(cpu1.node - cpu0.node));
    row.cpu_ffmpeg_pct = round1(pct(cpu1.tree - cpu0.tree - (cpu1.node - cpu0.node)));
    row.ffmpeg_processes = ffmpegPids.length;
    row.rss_mib = Math.round(gatewayIn(t1).rssBytes / 2 ** 20);
    row.rss_max_mib = Math.round(Math.max(rssMax, gatewayIn(t1).rssBytes) / 2 ** 20);
    row.ffmpeg_pss_mib = Math.round(pssBytes(ffmpegPids) / 2 ** 20);
    row.storage_bytes_window = storage1 - storage0;
    row.storage_bytes_end = storage1;
    row.storage_bytes_per_hour = Math.round(((storage1 - storage0) / elapsed) * 3600);
    row.disk_write_bytes_per_hour = Math.round(((io1 - io0) / elapsed) * 3600);
    row.disk_write_bytes_per_hour_node = Math.round(((ioNode1 - ioNode0) / elapsed) * 3600);
    // Which files on disk (data_dir, storage_dir) changed in the window, and by how many bytes.
    row.disk_files_changed = [...files1]
      .filter(([name, f]) => files0.get(name)?.mtimeMs !== f.mtimeMs)
      .map(
        ([name, f]) =>
          `${name} (${f.size - (files0.get(name)?.size ?? 0) >= 0 ? '+' : ''}${f.size - (files0.get(name)?.size ?? 0)} B)`,
      );
    row.segment_ram_mib = round1(segmentBytes / 2 ** 20);
    row.segment_ram_per_camera_mib = round1(segmentBytes / 2 ** 20 / n);
    let segments = 0;
    let restarts = 0;
    for (const id of ids) {
      const a = seg0.get(id) ?? { run: 0, index: -1, files: 0 };
      const b = seg1.get(id) ?? a;
      restarts += Math.max(0, b.run - 1);
      segments += b.run === a.run ? b.index - a.index : b.index + 1;
    }
    row.segments_per_camera_s = round2(segments / n / elapsed);
    row.segmenter_restarts = restarts;
    row.sim_cpu_pct = round1(pct(cpu1.sim - cpu0.sim));
    row.machine_busy_pct = Math.round(((m1.busy - m0.busy) / (m1.total - m0.total)) * 100);
    row.warnings_in_window = warnings.length - warn0;
    row.stopped_processes = [...stoppedSeen];
    row.window_s = round1(elapsed);

    if (withEvent) {
      const cam = cameraOf(cameras, 0);
      const device = devices.find((d) => d.model === 'SIM-1');
      if (!device) throw new Error('camera 0 (model SIM-1) is not among the devices');
      const pulled = () => (cam.calls.get('PullMessages') ?? 0) > 0;
      // The event reaches the gateway through its PullPoint subscription: wait until it polls.
      for (const deadline = performance.now() + 30_000; performance.now() < deadline && !pulled();) await sleep(100);
      if (!pulled()) throw new Error('the gateway never pulled events from camera 0');
      const clipDir = path.join(storageDir, device.id);
      const cameraSegments = path.join(segmentDir, device.id);
      const segmentFiles = () => {
        try {
          return readdirSync(cameraSegments).filter((x) => /^r\d+-\d+\.mp4$/.test(x)); // not a clip's copy of an open one
        } catch {
          return []; // the recorder restarted and emptied it
        }
      };
      /** When camera 0's recorder opens its next segment file: a keyframe has just closed the group of pictures before it. */
      const nextSegmentFile = async () => {
        const known = new Set(segmentFiles());
        for (const deadline = performance.now() + 5000; performance.now() < deadline; await sleep(5))
          if (segmentFiles().some((x) => !known.has(x))) return performance.now();
        throw new Error('camera 0 wrote no segment for 5 s');
      };
      const listed = new Set<string>();
      const trials: EventTrial[] = [];
      let lastRec: Recording | null = null;
      const alertCount = async () => (await api(AlertPage, `/v1/alerts?device_id=${device.id}&limit=100`)).data.length;
      const before = bytesIn(storageDir);
      for (let i = 0; i < eventTrials; i++) {
        // Each clip gets its whole pre-roll: the previous episode ended at its stop + post_roll.
        if (i > 0) await sleep(PRE_ROLL_S * 1000);
        const phase = (i + 0.5) / eventTrials;
        const trial: EventTrial = { gop_phase: round2(phase) };
        const alertsBefore = await alertCount();
        const tStart = performance.now();
        cam.trigger('motion', true);
        // The alert is created at the episode's first start (fast notification).
        let alertMs: number | null = null;
        for (let left = eventHoldS * 1000; left > 0; left = eventHoldS * 1000 - (performance.now() - tStart)) {
          if (alertMs === null && (await alertCount()) > alertsBefore) alertMs = performance.now() - tStart;
          await sleep(alertMs === null ? Math.min(50, left) : left);
        }
        // The stop comes at a set point of the GOP. The clip's end (stop + post_roll, whole GOPs
        // later) then lies `phase` of a GOP after a keyframe, and the recorder waits about
        // (1 - phase) GOPs for the next one: the trials sample that wait evenly, not by chance.
        const keyframeAt = await nextSegmentFile();
        await sleep(Math.max(0, phase * GOP_MS - (performance.now() - keyframeAt)));
        const stopWall = Date.now();
        const tStop = performance.now();
        cam.trigger('motion', false);
        // Where the time goes, from the files as they appear (the recorder logs its steps at debug
        // level only, and debug logging would change what is measured): the file of the group of
        // pictures holding the clip's end appears when its first part is written, which the clip's
        // cut does at once (without it, the next keyframe would close that part); ffmpeg creates `.<id>.mp4.tmp` when assembly starts; it is renamed to `<id>.mp4` once written and
        // synced; the row follows (listed), then the thumbnail `<id>.jpg`.
        const seen: { endGroupWritten?: number; assembling?: number; clip?: number; thumbnail?: number } = {};
        const clipsBefore = new Set(
          ((): string[] => {
            try {
              return readdirSync(clipDir);
            } catch {
              return [];
            }
          })(),
        );
        let known = new Set(segmentFiles());
        const watch = setInterval(() => {
          const now = performance.now();
          if (seen.endGroupWritten === undefined) {
            const current = segmentFiles();
            if (now - tStop >= POST_ROLL_S * 1000 && current.some((x) => !known.has(x))) seen.endGroupWritten = now;
            known = new Set(current);
          }
          let names: string[];
          try {
            names = readdirSync(clipDir).filter((x) => !clipsBefore.has(x));
          } catch {
            return;
          }
          if (names.some((x) => x.endsWith('.mp4.tmp'))) seen.assembling ??= now;
          if (names.some((x) => x.endsWith('.mp4') && !x.startsWith('.'))) seen.clip ??= now;
          if (names.some((x) => x.endsWith('.jpg') && !x.startsWith('.'))) seen.thumbnail ??= now;
        }, 10);
        let rec: Recording | null = null;
        while (!rec && performance.now() - tStop < 40_000) {
          rec =
            (await api(RecordingPage, `/v1/devices/${device.id}/recordings?limit=100`)).data.find(
              (r) => !listed.has(r.id),
            ) ?? null;
          if (!rec) await sleep(100);
        }
        const tAvail = performance.now();
        // The thumbnail comes after the row: watched a little longer.
        for (const until = performance.now() + 5000; seen.thumbnail === undefined && performance.now() < until;)
          await sleep(20);
        clearInterval(watch);
        // Seconds after the clip's nominal end (stop + post_roll) at which each step was first seen.
        const afterEnd = (t: number | undefined) => (t === undefined ? null : round2((t - tStop) / 1000 - POST_ROLL_S));
        trial.alert_ms = alertMs === null ? null : Math.round(alertMs);
        trial.held_s = round1((tStop - tStart) / 1000);
        trial.clip_ready_s = rec ? round2((tAvail - tStop) / 1000) : null;
        trial.steps_after_end_s = {
          end_group_written: afterEnd(seen.endGroupWritten),
          assembly_started: afterEnd(seen.assembling),
          clip_renamed: afterEnd(seen.clip),
          thumbnail: afterEnd(seen.thumbnail),
          listed: afterEnd(tAvail),
        };
        if (rec) {
          listed.add(rec.id);
          lastRec = rec;
          trial.clip_end_after_stop_s = round2((Date.parse(rec.ended_at) - stopWall) / 1000);
          trial.clip_listed_duration_s = rec.duration_s;
          trial.clip_bytes = rec.size_bytes;
        }
        trials.push(trial);
      }
      row.event_trials = trials;
      const ready = trials.map((t) => t.clip_ready_s ?? null);
      const allReady = ready.filter((x) => x !== null);
      row.clip_ready_max_s = allReady.length < ready.length ? null : Math.max(...allReady);
      row.clip_ready_median_s = allReady.length < ready.length ? null : upperMedian(allReady);
      const alerts = trials.map((t) => t.alert_ms ?? null).filter((x) => x !== null);
      row.alert_max_ms = alerts.length < trials.length ? null : Math.max(...alerts);
      row.storage_bytes_after_events = bytesIn(storageDir) - before;
      const lastId = lastRec?.id;
      const file =
        lastId === undefined ? undefined : walkFiles(storageDir).find((f) => f.path.endsWith(`${lastId}.mp4`));
      if (file) {
        const probe = await run('ffprobe', [
          '-v',
          'error',
          '-show_entries',
          'format=duration:stream=codec_name,width,height',
          '-of',
          'json',
          file.path,
        ]);
        const info = parseAs(Probe, probe.stdout, 'ffprobe');
        const [video] = info.streams;
        row.clip_file_duration_s = round2(Number(info.format.duration));
        if (video) row.clip_video = `${video.codec_name} ${video.width}x${video.height}`;
        // Decoded once, after the timing: a clip must start on a keyframe and play through.
        const decode = await run('ffmpeg', ['-v', 'error', '-nostdin', '-i', file.path, '-f', 'null', '-'], {
          maxBuffer: 1 << 20,
        }).catch((e: unknown) => ({
          stderr: typeof e === 'object' && e !== null && 'stderr' in e ? String(e.stderr) : String(e),
        }));
        const errors = decode.stderr.trim() ? decode.stderr.trim().split('\n') : [];
        row.clip_decode_errors = errors.length;
        if (errors[0] !== undefined) row.clip_decode_first_error = errors[0].slice(0, 200);
      }
    }
  } catch (err) {
    row.error = err instanceof Error ? err.message : String(err);
  } finally {
    // ffmpeg children must end with the gateway; any left over is a finding (and is ended here).
    const gatewayPid = gateway?.pid;
    const children = gatewayPid === undefined ? [] : tree(procTable(), gatewayPid).filter((pid) => pid !== gatewayPid);
    await gateway?.stop();
    await sleep(500);
    const left = children.filter((pid) => procTable().get(pid)?.comm === 'ffmpeg');
    if (left.length) {
      row.leftover_ffmpeg = left.length;
      for (const pid of left) process.kill(pid, 'SIGKILL');
    }
    await fleet?.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(segmentDir, { recursive: true, force: true });
  }
  // Distinct messages only (a restart loop would repeat one line many times; ffmpeg names its
  // context by address, which differs per process), with how often each came.
  const distinct = new Map();
  for (const w of warnings) {
    const text = `${w.msg}${w.detail ? `: ${typeof w.detail === 'string' ? w.detail : JSON.stringify(w.detail)}` : ''}`
      .replace(/ @ 0x[0-9a-f]+\]/g, ']')
      .slice(0, 200);
    distinct.set(text, (distinct.get(text) ?? 0) + 1);
  }
  row.warnings = [...distinct].slice(0, 8).map(([text, times]) => `${times}x ${text}`);
  return row;
}

// --- all N ---------------------------------------------------------------------------------------

// What one ffmpeg process start costs here (spawn to exit of `ffmpeg -version`, median of 5): a
// clip takes three (audio probe, assembly, thumbnail).
const spawnMs: number[] = [];
for (let i = 0; i < 5; i++) {
  const t = performance.now();
  await run('ffmpeg', ['-hide_banner', '-version']);
  spawnMs.push(performance.now() - t);
}
const ffmpegSpawnMs = Math.round(upperMedian(spawnMs));
const cpuModel = os.cpus()[0]?.model ?? 'unknown';

const tBench = performance.now();
const rows: Row[] = [];
for (const n of counts) {
  const row = await benchCameras(n, eventCounts.includes(n));
  rows.push(row);
  console.error(
    `recording bench: ${n} cameras done (${Math.round((performance.now() - tBench) / 1000)} s): ${JSON.stringify(row)}`,
  );
}
const benchS = Math.round((performance.now() - tBench) / 1000);

const cell = (v: string | number | null | undefined, w: number) => String(v ?? '-').padStart(w);
console.log(
  `\nbench recording: N simulated 1080p15 H.264 cameras at ${MAIN_KBPS} kbit/s (1 s GOP, looped, loopback), recorder segmenting each main stream into RAM; ${seconds} s per N without events, node ${process.version}, ${os.cpus().length} cores (${cpuModel}), ${benchS} s in all\n`,
);
console.log(
  '| cameras | CPU % of a core (gateway+ffmpeg) | per camera | node | ffmpeg (n) | RSS MiB | ffmpeg PSS MiB | segment RAM MiB (per camera) | storage bytes in window | storage B/h | disk writes B/h | segments/s per camera | restarts | simulator CPU % | machine busy % |',
);
console.log(
  '|--------:|---------------------------------:|-----------:|-----:|-----------:|--------:|---------------:|-----------------------------:|------------------------:|------------:|----------------:|----------------------:|---------:|----------------:|---------------:|',
);
for (const r of rows) {
  if (r.error && r.cpu_total_pct === undefined) {
    console.log(
      `| ${cell(r.cameras, 7)} | failed: ${r.error} (online ${r.online ?? '-'}, recording ${r.recording ?? '-'}) |`,
    );
    continue;
  }
  console.log(
    `| ${cell(r.cameras, 7)} | ${cell(r.cpu_total_pct, 32)} | ${cell(r.cpu_per_camera_pct, 10)} | ${cell(r.cpu_node_pct, 4)} | ${cell(`${r.cpu_ffmpeg_pct} (${r.ffmpeg_processes})`, 10)} | ${cell(r.rss_mib, 7)} | ${cell(r.ffmpeg_pss_mib, 14)} | ${cell(`${r.segment_ram_mib} (${r.segment_ram_per_camera_mib})`, 28)} | ${cell(r.storage_bytes_window, 23)} | ${cell(r.storage_bytes_per_hour, 11)} | ${cell(r.disk_write_bytes_per_hour, 15)} | ${cell(r.segments_per_camera_s, 21)} | ${cell(r.segmenter_restarts, 8)} | ${cell(r.sim_cpu_pct, 15)} | ${cell(r.machine_busy_pct, 14)} |`,
  );
}
const events = rows.filter((r) => r.event_trials !== undefined);
if (events.length) {
  console.log(
    `\nmotion event on camera 0, held ~${eventHoldS} s, pre_roll_s ${PRE_ROLL_S}, post_roll_s ${POST_ROLL_S}; ${eventTrials} trials per N, stopped at spread phases of the ${GOP_MS} ms GOP ` +
      `(goal: clip listed <= ${POST_ROLL_S + 2} s after the stop); one ffmpeg start here: ${ffmpegSpawnMs} ms:\n`,
  );
  console.log(
    '| cameras | GOP phase of stop | alert after start ms | stop → clip listed s | after stop + post_roll, s: end GOP written / assembly starts / clip renamed / thumbnail / listed | clip end − stop s | clip s listed | clip MB |',
  );
  console.log(
    '|--------:|------------------:|---------------------:|---------------------:|---------------------------------------------------------------------------------------------:|------------------:|--------------:|--------:|',
  );
  for (const r of events) {
    for (const t of r.event_trials ?? []) {
      const st = t.steps_after_end_s;
      const steps = [st?.end_group_written, st?.assembly_started, st?.clip_renamed, st?.thumbnail, st?.listed]
        .map((x) => x ?? '-')
        .join(' / ');
      console.log(
        `| ${cell(r.cameras, 7)} | ${cell(t.gop_phase, 17)} | ${cell(t.alert_ms, 20)} | ${cell(t.clip_ready_s, 20)} | ${cell(steps, 92)} | ${cell(t.clip_end_after_stop_s, 17)} | ${cell(t.clip_listed_duration_s, 13)} | ${cell(t.clip_bytes === undefined ? '-' : round1(t.clip_bytes / 1e6), 7)} |`,
      );
    }
  }
  for (const r of events) {
    console.log(
      `\n${r.cameras} cameras: stop → clip listed median ${r.clip_ready_median_s} s, max ${r.clip_ready_max_s} s; last clip: ${r.clip_video ?? '-'}, ${r.clip_file_duration_s ?? '-'} s in the file, ` +
        `${r.clip_decode_errors ?? '-'} decode errors${r.clip_decode_first_error ? ` (${r.clip_decode_first_error})` : ''}; storage after the events: ${r.storage_bytes_after_events} bytes (clips + thumbnails)`,
    );
  }
}
for (const r of rows) {
  const notes = [
    ...(r.error ? [`error: ${r.error}`] : []),
    ...(r.stopped_processes?.length
      ? [`processes seen stopped (SIGSTOP from outside?): ${r.stopped_processes.join(', ')}`]
      : []),
    ...(r.leftover_ffmpeg ? [`${r.leftover_ffmpeg} ffmpeg left after the gateway stopped`] : []),
    ...(r.warnings ?? []).map((w) => `gateway warned: ${w}`),
  ];
  if (notes.length) console.log(`\n${r.cameras} cameras:\n${notes.map((x) => `  - ${x}`).join('\n')}`);
}
/** The rows whose window was measured. */
const measured = rows.flatMap((r) =>
  r.cpu_per_camera_pct === undefined || r.cpu_total_pct === undefined
    ? []
    : [{ ...r, cpu_per_camera_pct: r.cpu_per_camera_pct, cpu_total_pct: r.cpu_total_pct }],
);
const at16 = rows.find((r) => r.cameras === 16);
// Least squares over the rows: what each further camera adds (slope) and what the gateway costs
// with its recorders whatever their number (intercept: timers, ONVIF health and event polls).
let fit = null;
if (measured.length >= 2) {
  const mx = measured.reduce((a, r) => a + r.cameras, 0) / measured.length;
  const my = measured.reduce((a, r) => a + r.cpu_total_pct, 0) / measured.length;
  const sxx = measured.reduce((a, r) => a + (r.cameras - mx) ** 2, 0);
  const slope = sxx > 0 ? measured.reduce((a, r) => a + (r.cameras - mx) * (r.cpu_total_pct - my), 0) / sxx : 0;
  fit = { cpu_marginal_per_camera_pct: round2(slope), cpu_fixed_pct: round1(my - slope * mx) };
  console.log(`
CPU fit over the rows: ${fit.cpu_marginal_per_camera_pct} % of a core per further camera + ${fit.cpu_fixed_pct} % fixed`);
}
const goals = {
  // At 16 cameras (with 1 the fixed share alone is more), and each further camera at most 0.9 %.
  cpu_le_1pct_per_camera_at_16: at16?.cpu_per_camera_pct === undefined ? null : at16.cpu_per_camera_pct <= 1,
  cpu_slope_le_0_9pct: fit === null ? null : fit.cpu_marginal_per_camera_pct <= 0.9,
  // null: 16 cameras were not asked for (BENCH_CAMERAS).
  cameras_16_run:
    at16 === undefined
      ? null
      : at16.cpu_per_camera_pct !== undefined &&
        at16.segmenter_restarts === 0 &&
        (at16.segments_per_camera_s ?? 0) >= 0.9,
  zero_bytes_per_hour: measured.length === rows.length && measured.every((r) => r.storage_bytes_window === 0),
  // Every trial: the worst GOP phase counts, as a user meets it.
  clip_ready_le_post_roll_plus_2s:
    events.length > 0 &&
    events.every((r) => typeof r.clip_ready_max_s === 'number' && r.clip_ready_max_s <= POST_ROLL_S + 2),
};
console.log(
  `\ngoals: <= 1 % of a core per camera at 16 cameras: ${goals.cpu_le_1pct_per_camera_at_16}; <= 0.9 % per further camera: ${goals.cpu_slope_le_0_9pct}; 16 cameras run: ${goals.cameras_16_run}; 0 bytes/h without events: ${goals.zero_bytes_per_hour}; ` +
    `clip ready <= post_roll_s + 2 s: ${goals.clip_ready_le_post_roll_plus_2s}\n`,
);
console.log(
  JSON.stringify({
    bench: 'recording',
    seconds,
    settle_s: settleS,
    pre_roll_s: PRE_ROLL_S,
    post_roll_s: POST_ROLL_S,
    main_kbps: MAIN_KBPS,
    cores: os.cpus().length,
    cpu_model: cpuModel,
    ffmpeg_spawn_ms: ffmpegSpawnMs,
    bench_s: benchS,
    ...(fit ?? {}),
    rows,
    goals,
  }),
);
process.exit(0);
