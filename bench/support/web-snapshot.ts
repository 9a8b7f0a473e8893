// The snapshot endpoint under the load of a camera page: the gateway as its own process, 16
// simulated 1080p15 H.264 cameras (looped clip, 1 s GOP, a 320x180 sub stream) on loopback, and:
//  - cold: the first picture of each camera at the width asked (nothing cached; the stream the
//    picture comes from not yet read by the relay, so it includes the relay opening it and waiting
//    for a keyframe), median and p90 over the cameras;
//  - decode: a picture of a camera whose stream is open but whose last picture has expired (one
//    ffmpeg decode of the cached keyframe), median over the cameras;
//  - warm: the same picture asked again within snapshot.cache_ms (from the cache), median;
//  - load: every camera asked every PERIOD s (phases spread) for SECONDS s, as a page showing the 16
//    refreshes them: latency median/p90, and the gateway's CPU in % of one core (node, plus its
//    ffmpeg for pictures: the short-lived runs it reaped and the long-lived decoders still running;
//    its other children, the recorders' ffmpeg, shown apart and not counted in either phase),
//    against the same gateway with the same cameras and no
//    snapshot requests (baseline: the relay and the recorder reading the main streams); the
//    difference is what the snapshots cost.
//    BENCH_SCHEDULE=spread (the default) spreads the cameras' phases over the period (the worst
//    case for batching: one picture at a time); burst asks for all at once each period, as a page
//    refreshing its stills on one timer does (a browser sends at most 6 at a time over HTTP/1.1;
//    this client sends all 16).
// Env: BENCH_WIDTH (default 320), BENCH_SECONDS (default 30), BENCH_PERIOD_S (default 5), BENCH_CAMERAS (default 16),
// BENCH_SCHEDULE,
// BENCH_MAX_DECODERS (snapshot.max_decoders; 0: no long-lived decoder, every picture one short-lived ffmpeg run).
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { startBenchFleet } from './fleet.ts';
import { cameraEntries } from './fleet.ts';
import { getJson, metric, metricsText, startGatewayProcess, type GatewayProcess } from './gateway-process.ts';
import { DevicePage, type Device } from './json.ts';
import { procStat, statSeconds } from './proc.ts';
import { quantile, round } from './stats.ts';

const say = (text: string) => process.stderr.write(`web-snapshot: ${text}\n`);

/** The pids of a process's children still running (they are not in its reaped children's CPU). */
function childrenOf(pid: number): number[] {
  const pids: number[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      pids.push(
        ...readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
      );
    } catch {
      // the thread ended
    }
  }
  return pids;
}

interface CpuReading {
  self: number;
  children: number;
  living: Map<number, { s: number; still: boolean }>;
}

/**
 * CPU seconds of a process (self), of its children it has reaped (the short-lived snapshot ffmpeg
 * runs, long-lived decoders that ended), and of each child still running, by pid, with whether it
 * is a snapshot decoder (its command line writes JPEGs).
 */
function cpu(pid: number): CpuReading {
  const f = procStat(pid).fields;
  const living = new Map<number, { s: number; still: boolean }>();
  for (const child of childrenOf(pid)) {
    try {
      living.set(child, {
        s: statSeconds(procStat(child).fields, 11, 12),
        still: readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('mjpeg'),
      });
    } catch {
      // it ended meanwhile (then it is reaped and counted there)
    }
  }
  return { self: statSeconds(f, 11, 12), children: statSeconds(f, 13, 14), living };
}

/** CPU seconds between two cpu() readings: node, ffmpeg for pictures (reaped + decoders), other children. */
function cpuBetween(a: CpuReading, b: CpuReading) {
  let stills = b.children - a.children;
  let others = 0;
  for (const [child, now] of b.living) {
    const used = now.s - (a.living.get(child)?.s ?? 0);
    if (now.still) stills += used;
    else others += used;
  }
  return { node: b.self - a.self, stills, others, total: b.self - a.self + stills };
}

/** The snapshot counters of the gateway's /metrics that the load phase reads. */
const COUNTERS = {
  decodes: 'edge_gateway_snapshot_decodes_total{input="keyframe"}',
  runs: 'edge_gateway_snapshot_ffmpeg_runs_total',
  starts: 'edge_gateway_snapshot_decoder_starts_total',
  reused: 'edge_gateway_snapshot_reused_total',
};
async function counters(gateway: GatewayProcess): Promise<Record<keyof typeof COUNTERS, number>> {
  const text = await metricsText(gateway);
  const value = (series: string) => metric(text, series) ?? 0;
  return {
    decodes: value(COUNTERS.decodes),
    runs: value(COUNTERS.runs),
    starts: value(COUNTERS.starts),
    reused: value(COUNTERS.reused),
  };
}

export async function measureSnapshot() {
  const width = Number(process.env.BENCH_WIDTH ?? 320);
  const loadSeconds = Number(process.env.BENCH_SECONDS ?? 30);
  const periodS = Number(process.env.BENCH_PERIOD_S ?? 5);
  const count = Number(process.env.BENCH_CAMERAS ?? 16);
  const schedule = process.env.BENCH_SCHEDULE === 'burst' ? 'burst' : 'spread';
  const maxDecoders = Number(process.env.BENCH_MAX_DECODERS ?? 4);
  const logger = pino({ level: 'silent' });
  const fleet = await startBenchFleet({ count, mainKbps: 2000, looped: true, logger });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-snapshot-'));
  let gateway: GatewayProcess | null = null;
  try {
    const configFile = path.join(dir, 'config.yaml');
    writeFileSync(
      configFile,
      `gateway:\n  data_dir: ${dir}/data\napi:\n  host: 127.0.0.1\n  port: 0\nrtsp:\n  host: 127.0.0.1\n  port: 0\n  public_host: 127.0.0.1\n` +
        `recording:\n  segment_dir: ${dir}/segments\nmetrics:\n  listen: 127.0.0.1:0\nonvif:\n  discovery:\n    enabled: false\nsnapshot:\n  max_decoders: ${maxDecoders}\n` +
        `cameras:\n${cameraEntries(fleet, 'bench', (i) => `Cam ${i + 1}`)}log:\n  level: info\n`,
    );
    say(`${count} cameras up; starting the gateway`);
    const gw = (gateway = await startGatewayProcess(configFile));
    const { pid } = gw;
    const ca = readFileSync(path.join(dir, 'data/tls/cert.pem'));
    const token = gw.token('devices:read');
    let devices: Device[] = [];
    for (let i = 0; i < 600 && devices.length < count; i++) {
      devices = (await getJson(DevicePage, gw.apiUrl, ca, token, '/v1/devices?limit=100')).data.filter(
        (d) => d.status === 'online',
      );
      if (devices.length < count) await sleep(100);
    }
    if (devices.length < count) throw new Error(`${devices.length} of ${count} cameras adopted`);
    const agent = new Agent({ keepAlive: true, ca, servername: 'localhost' });
    const snapshot = (id: string) =>
      new Promise<{ status: number | undefined; ms: number; bytes: number }>((resolve, reject) => {
        const t0 = performance.now();
        const req = request(
          new URL(`/v1/devices/${id}/snapshot?width=${width}`, gw.apiUrl),
          { agent, headers: { authorization: `Bearer ${token}` } },
          (res) => {
            let bytes = 0;
            res.on('data', (c: Buffer) => (bytes += c.length));
            res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - t0, bytes }));
          },
        );
        req.on('error', reject);
        req.end();
      });

    say(`${count} cameras online; baseline`);
    // Baseline: the cameras streaming to the relay and the recorder, no picture asked.
    await sleep(5000);
    const idle0 = cpu(pid);
    const idleStart = performance.now();
    await sleep(Math.min(loadSeconds, 15) * 1000);
    const idle1 = cpu(pid);
    const baselinePct = (cpuBetween(idle0, idle1).total / ((performance.now() - idleStart) / 1000)) * 100;

    say('cold, warm and decode latencies');
    const cold: number[] = [];
    const warm: number[] = [];
    for (const d of devices) {
      const first = await snapshot(d.id);
      if (first.status !== 200) throw new Error(`cold snapshot of ${d.id}: ${first.status}`);
      cold.push(first.ms);
      warm.push((await snapshot(d.id)).ms);
    }
    await sleep(1200); // past snapshot.cache_ms: the next pictures are decoded again
    const decode: number[] = [];
    for (const d of devices) decode.push((await snapshot(d.id)).ms);

    say(`load: each camera every ${periodS} s for ${loadSeconds} s`);
    // Load: each camera every periodS, phases spread over the period.
    const counters0 = await counters(gw);
    const load0 = cpu(pid);
    const loadStart = performance.now();
    const latencies: number[] = [];
    let failed = 0;
    await Promise.all(
      devices.map(async (d, i) => {
        if (schedule === 'spread') await sleep((i * periodS * 1000) / devices.length);
        while (performance.now() - loadStart < loadSeconds * 1000) {
          const due = performance.now() + periodS * 1000;
          const r = await snapshot(d.id);
          if (r.status === 200) latencies.push(r.ms);
          else failed++;
          await sleep(Math.max(0, due - performance.now()));
        }
      }),
    );
    const load1 = cpu(pid);
    const loadS = (performance.now() - loadStart) / 1000;
    const counters1 = await counters(gw);
    const decodes = counters1.decodes - counters0.decodes;
    const runs = counters1.runs - counters0.runs;
    const starts = counters1.starts - counters0.starts;
    const reused = counters1.reused - counters0.reused;
    const used = cpuBetween(load0, load1);
    const nodePct = (used.node / loadS) * 100;
    const ffmpegPct = (used.stills / loadS) * 100;
    const otherPct = (used.others / loadS) * 100;
    agent.destroy();

    const json = {
      cameras: count,
      width,
      period_s: periodS,
      schedule,
      max_decoders: maxDecoders,
      seconds: loadSeconds,
      cold_ms_median: round(quantile(cold, 0.5)),
      cold_ms_p90: round(quantile(cold, 0.9)),
      decode_ms_median: round(quantile(decode, 0.5)),
      warm_ms_median: round(quantile(warm, 0.5), 1),
      load_requests: latencies.length + failed,
      load_failed: failed,
      load_decodes: decodes,
      load_ffmpeg_runs: runs,
      load_decoder_starts: starts,
      load_reused: reused,
      load_ms_median: round(quantile(latencies, 0.5)),
      load_ms_p90: round(quantile(latencies, 0.9)),
      cpu_pct_load: round(nodePct + ffmpegPct, 1),
      cpu_pct_load_node: round(nodePct, 1),
      cpu_pct_load_ffmpeg: round(ffmpegPct, 1),
      cpu_pct_load_other_children: round(otherPct, 1),
      cpu_pct_baseline: round(baselinePct, 1),
      cpu_pct_snapshots: round(nodePct + ffmpegPct - baselinePct, 1),
      node: process.version,
      cores: os.cpus().length,
    };
    const table = [
      `web-snapshot: ${count} simulated 1080p15 H.264 cameras (sub 320x180, 1 s GOP, looped), pictures ${width} px wide, snapshot.max_decoders ${maxDecoders}, the gateway as its own process on loopback`,
      '',
      '| measure | value |',
      '|---|---|',
      `| cold (first picture of a camera: stream opened, keyframe awaited, decoded), median / p90 | ${json.cold_ms_median} / ${json.cold_ms_p90} ms |`,
      `| decode (stream open, last picture expired), median | ${json.decode_ms_median} ms |`,
      `| warm (within snapshot.cache_ms), median | ${json.warm_ms_median} ms |`,
      `| load: each camera every ${periodS} s (${schedule}) for ${loadSeconds} s: requests / failed / pictures decoded / short ffmpeg runs / decoders started / pictures reused | ${json.load_requests} / ${failed} / ${decodes} / ${runs} / ${starts} / ${reused} |`,
      `| load latency median / p90 | ${json.load_ms_median} / ${json.load_ms_p90} ms |`,
      `| gateway CPU under load (node + ffmpeg for pictures) | ${json.cpu_pct_load} % (${json.cpu_pct_load_node} + ${json.cpu_pct_load_ffmpeg}) of one core (its recorders' ffmpeg, not counted: ${json.cpu_pct_load_other_children} %) |`,
      `| gateway CPU, same cameras, no snapshots | ${json.cpu_pct_baseline} % |`,
      `| what the snapshots cost | ${json.cpu_pct_snapshots} % of one core (goal ≤ 5 %) |`,
    ].join('\n');
    return { table, json };
  } finally {
    await gateway?.stop();
    await fleet.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
