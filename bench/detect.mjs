// Benchmark: the person / vehicle detector as the daemon runs it: a DetectorPool with one
// worker thread (the tfjs-wasm CenterNet backend, SIMD, one thread) fed through its queue.
//  - inference time per 512×512 region (one model run, including the trip to the worker): p50 / p95
//  - CPU seconds per motion event checked (3 frames of a 1280×720 camera): with a moving area from
//    the software motion detector (one 512 crop per frame), and for ONVIF motion without a region
//    (two 720 tiles per frame); and from that, motion events per minute one core can check
//  - RSS the detector adds to the process (model, wasm heap, worker thread) after warm-up
//  - precision and recall for person (human) and vehicle on the hand-labelled photos of Debian's
//    darknet package (test/detect/photo-labels.json) plus test patterns (no objects), at the config's
//    min_score and at other scores, to show where the defaults sit. A detection is right when its
//    centre lies in a labelled box of its category widened by half its size on each side.
//  - motion start → classified alert through the whole gateway (bench/detect-latency.mjs): p50 / max
//    over the human alerts of BENCH_LATENCY_S seconds of a looping scene (goal <= 2 s)
// Env: BENCH_RUNS (default 20: timed single inferences), BENCH_CHECKS (default 5 per kind),
// BENCH_LATENCY_S (default 60; 0 skips the gateway part).
// Timings on a machine shared with other work are inflated: loadavg is in the JSON line.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { validateConfig } from '../dist/config/load.js';
import { iou, suppressOverlaps } from '../dist/detect/boxes.js';
import { judgeCheck } from '../dist/detect/confirm.js';
import { classify } from '../dist/detect/labels.js';
import { DetectorPool } from '../dist/detect/detector-pool.js';
import { decodeJpeg } from '../dist/detect/jpeg.js';
import { alertLatency } from './detect-latency.mjs';

const root = path.resolve(import.meta.dirname, '..');
const runs = Number(process.env.BENCH_RUNS ?? 20);
const checksPerKind = Number(process.env.BENCH_CHECKS ?? 5);
const config = validateConfig({}).detection;
const photos = execFileSync(path.join(root, 'run'), ['test-photos'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
const labelled = JSON.parse(readFileSync(path.join(root, 'test/detect/photo-labels.json'), 'utf8')).photos;
const ffmpeg = { ffmpegPath: 'ffmpeg' };
const jpeg = (name) => readFileSync(path.join(photos, name));
const pattern = (source) => execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', source, '-frames:v', '1', '-f', 'image2pipe', '-c:v', 'mjpeg', 'pipe:1']);
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const round = (v, d = 3) => Number(v.toFixed(d));
const cpuS = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

// What the detector keeps, not what this script has not collected yet (decoded test frames): a
// full collection before each reading (node's gc, reached without --expose-gc on the command line).
v8.setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc');
collect();
const rssBefore = process.memoryUsage().rss;
const pool = new DetectorPool({ threads: 1, queueSize: 64, floorScore: 0.1 });
const t0 = performance.now();
if ((await pool.started()) !== 'ready') throw new Error(`detector did not start: ${pool.stats().error}`);
const loadS = (performance.now() - t0) / 1000;

// One inference per check: a 512×512 region of a real photo.
const square = await decodeJpeg(jpeg('person.jpg'), { ...ffmpeg, size: { width: 512, height: 512 } });
await pool.check({ camera: 'warm-up', frames: [square], motion: null });
const inferMs = [];
for (let i = 0; i < runs; i++) {
  const t = performance.now();
  await pool.check({ camera: 'bench', frames: [square], motion: null });
  inferMs.push(performance.now() - t);
}
collect();
const rssAddedMb = (process.memoryUsage().rss - rssBefore) / 2 ** 20;

// A motion event: 3 frames of a 1280×720 camera.
const camera = await decodeJpeg(jpeg('kite.jpg'), { ...ffmpeg, size: { width: 1280, height: 720 } });
async function eventCost(motion) {
  const cpu0 = cpuS();
  const t = performance.now();
  for (let i = 0; i < checksPerKind; i++) await pool.check({ camera: 'bench', frames: [camera, camera, camera], motion });
  return { cpu_s: round((cpuS() - cpu0) / checksPerKind), wall_s: round((performance.now() - t) / 1000 / checksPerKind) };
}
const withRegion = await eventCost({ x: 0.45, y: 0.45, w: 0.1, h: 0.2 });
const withoutRegion = await eventCost(null);

// Precision / recall on the labelled photos and on patterns with nothing in them.
const scenes = Object.keys(labelled).map((name) => ({ name, bytes: jpeg(name), truth: labelled[name] }));
for (const [name, source] of [['bars', 'smptebars=s=1280x720'], ['testcard', 'testsrc2=s=1280x720'], ['noise', 'nullsrc=s=1280x720,geq=r=random(1)*255:g=random(2)*255:b=random(3)*255']]) {
  scenes.push({ name, bytes: pattern(source), truth: [] });
}
const found = [];
for (const scene of scenes) {
  const frame = await decodeJpeg(scene.bytes, ffmpeg);
  const [raw] = await pool.check({ camera: 'bench', frames: [frame], motion: null });
  // As a check does it: labels, overlaps merged per category (min_score applied in score() below).
  found.push({ scene, raw, detections: suppressOverlaps(classify(raw, config.labels, 0), (d) => d.category) });
}
const overlap = (b, [x, y, w, h]) => iou(b, { x, y, w, h });
const widened = ([x, y, w, h]) => [x - w / 2, y - h / 2, x + w * 1.5, y + h * 1.5];
function score(minScore) {
  const out = {};
  for (const category of ['human', 'vehicle']) {
    let tp = 0;
    let fp = 0;
    let truths = 0;
    for (const { scene, detections } of found) {
      const open = scene.truth.filter((t) => t.category === category).map((t) => ({ box: t.box, area: widened(t.box) }));
      truths += open.length;
      for (const d of detections.filter((x) => x.category === category && x.score >= minScore).sort((a, b) => b.score - a.score)) {
        const [cx, cy] = [d.box.x + d.box.w / 2, d.box.y + d.box.h / 2];
        // Of the labelled objects around its centre, the one it overlaps most (a truck's centre may
        // lie in a bicycle's widened box too).
        const candidates = open.filter(({ area: [x1, y1, x2, y2] }) => cx >= x1 && cx <= x2 && cy >= y1 && cy <= y2);
        const best = candidates.sort((a, b) => overlap(d.box, b.box) - overlap(d.box, a.box))[0];
        if (best) {
          tp++;
          open.splice(open.indexOf(best), 1);
        } else fp++;
      }
    }
    out[category] = { precision: tp + fp ? round(tp / (tp + fp)) : 1, recall: truths ? round(tp / truths) : 1, tp, fp, objects: truths };
  }
  return out;
}
// Per photo, as an alert would see it: is a person (a vehicle) confirmed at the default min_score and
// threshold (the same frame three times: the median is that frame's best score)?
function events() {
  const out = {};
  for (const category of ['human', 'vehicle']) {
    let tp = 0, fp = 0, fn = 0;
    for (const { scene, raw } of found) {
      const verdict = judgeCheck([raw, raw, raw], { labels: config.labels, minScore: config.min_score, threshold: config.threshold, zones: {}, requiredZones: [] });
      const confirmed = verdict.medians[category] >= config.threshold;
      const present = scene.truth.some((t) => t.category === category);
      if (confirmed && present) tp++;
      else if (confirmed) fp++;
      else if (present) fn++;
    }
    out[category] = { precision: tp + fp ? round(tp / (tp + fp)) : 1, recall: tp + fn ? round(tp / (tp + fn)) : 1, tp, fp, fn, scenes: found.length };
  }
  return out;
}
const byScore = Object.fromEntries([0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6].map((s) => [s, score(s)]));
const stats = pool.stats();
await pool.close();

const p50 = round(pct(inferMs, 50), 0);
const p95 = round(pct(inferMs, 95), 0);
const perMinute = (cost) => round(60 / cost.cpu_s, 1);
const latencyS = Number(process.env.BENCH_LATENCY_S ?? 60);
const latency = latencyS > 0 ? await alertLatency({ photos, seconds: latencyS }) : null;
const alertLatencyJson = latency && {
  human_alerts: latency.human.length,
  motion_alerts: latency.motion,
  p50_s: latency.human.length ? round(pct(latency.human, 50), 2) : null,
  max_s: latency.human.length ? round(Math.max(...latency.human), 2) : null,
  goal_met: latency.human.length > 0 && Math.max(...latency.human) <= 2,
};
console.log(`\nbench detect: CenterNet (COCO, 512×512) on tfjs-wasm, 1 worker thread, node ${process.version}, ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}\n`);
console.log(`model load ${loadS.toFixed(1)} s; inference per 512 region p50 ${p50} ms, p95 ${p95} ms (${runs} runs); RSS added ${rssAddedMb.toFixed(0)} MB (goal <= 150)`);
console.log(`motion event (3 frames of 1280×720): with a moving area ${withRegion.cpu_s} CPU s (${perMinute(withRegion)} events/min/core); ONVIF motion, 2 tiles a frame ${withoutRegion.cpu_s} CPU s (${perMinute(withoutRegion)} events/min/core)`);
for (const [s, r] of Object.entries(byScore)) {
  console.log(`min_score ${s.padEnd(4)} person P ${r.human.precision} R ${r.human.recall} (${r.human.tp}/${r.human.objects}, ${r.human.fp} false) | vehicle P ${r.vehicle.precision} R ${r.vehicle.recall} (${r.vehicle.tp}/${r.vehicle.objects}, ${r.vehicle.fp} false)`);
}
const ev = events();
console.log(`per photo at min_score ${config.min_score} / threshold ${config.threshold}: person P ${ev.human.precision} R ${ev.human.recall} | vehicle P ${ev.vehicle.precision} R ${ev.vehicle.recall} (${found.length} scenes)`);
if (alertLatencyJson) console.log(`motion start → human alert (whole gateway): p50 ${alertLatencyJson.p50_s} s, max ${alertLatencyJson.max_s} s over ${alertLatencyJson.human_alerts} alerts (goal <= 2 s)`);
console.log(
  JSON.stringify({
    bench: 'detect',
    model: 'centernet-mobilenetv3-coco-512',
    backend: 'tfjs-wasm-simd',
    cores: os.cpus().length,
    loadavg: round(os.loadavg()[0], 2),
    model_load_s: round(loadS, 2),
    infer_ms_p50: p50,
    infer_ms_p95: p95,
    rss_added_mb: round(rssAddedMb, 0),
    event_with_region: { ...withRegion, per_min_per_core: perMinute(withRegion) },
    event_without_region: { ...withoutRegion, per_min_per_core: perMinute(withoutRegion) },
    min_score: config.min_score,
    threshold: config.threshold,
    at_min_score: score(config.min_score),
    events_at_defaults: events(),
    by_score: byScore,
    dropped: stats.dropped,
    motion_to_alert: alertLatencyJson,
    goal_rss_met: rssAddedMb <= 150,
  }),
);
