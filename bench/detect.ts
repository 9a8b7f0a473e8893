// Benchmark: the person / vehicle detector as the daemon runs it: a DetectorPool with one
// worker thread (the tfjs-wasm CenterNet backend, SIMD, one thread) fed through its queue.
//  - inference time per 512×512 region (one model run, including the trip to the worker): p50 / p95
//  - CPU seconds per motion event checked (3 frames of a 1280×720 camera, each sent back scaled to
//    640 px as the daemon asks, for the thumbnail): with a moving area from the software motion
//    detector (one 512 crop per frame), and for ONVIF motion without a region (two 720 tiles per
//    frame); and from that, motion events per minute one core can check; and the scaled copy alone
//  - RSS the detector adds to the process (model, wasm heap, worker thread) after warm-up
//  - precision and recall for person (human) and vehicle on the hand-labelled photos of Debian's
//    darknet package (test/detect/photo-labels.json) plus test patterns (no objects), at the config's
//    min_score and at other scores, to show where the defaults sit. A detection is right when its
//    centre lies in a labelled box of its category widened by half its size on each side.
//  - motion start → classified alert through the whole gateway (bench/support/detect-latency.ts): p50 / max
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
import Type, { type Static } from 'typebox';
import { validateConfig } from '../dist/config/load.js';
import { iou, suppressOverlaps } from '../dist/detect/boxes.js';
import { judgeCheck } from '../dist/detect/confirm.js';
import { DetectorPool, type CheckRequest } from '../dist/detect/detector-pool.js';
import { shrinkFrame } from '../dist/detect/frame.js';
import { decodeJpeg } from '../dist/detect/jpeg.js';
import { THUMBNAIL_WIDTH as KEPT_WIDTH } from '../dist/detect/service.js';
import { classify } from '../dist/detect/labels.js';
import type { Box, Category, Detection, RawDetection } from '../dist/detect/types.js';
import { alertLatency, testPhotos } from './support/detect-latency.ts';
import { parseAs } from './support/json.ts';
import { percentile } from './support/stats.ts';

const root = path.resolve(import.meta.dirname, '..');
const runs = Number(process.env.BENCH_RUNS ?? 20);
const checksPerKind = Number(process.env.BENCH_CHECKS ?? 5);
const config = validateConfig({}).detection;
const photos = testPhotos();
/** A labelled box: [x, y, w, h] in 0–1 of the picture. */
const LabelBox = Type.Tuple([Type.Number(), Type.Number(), Type.Number(), Type.Number()]);
type LabelBox = Static<typeof LabelBox>;
const PhotoLabels = Type.Object({
  photos: Type.Record(Type.String(), Type.Array(Type.Object({ category: Type.String(), box: LabelBox }))),
});
const labelled = parseAs(
  PhotoLabels,
  readFileSync(path.join(root, 'test/detect/photo-labels.json'), 'utf8'),
  'test/detect/photo-labels.json',
).photos;
const ffmpeg = { ffmpegPath: 'ffmpeg' };
const jpeg = (name: string) => readFileSync(path.join(photos, name));
const pattern = (source: string) =>
  execFileSync('ffmpeg', [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    source,
    '-frames:v',
    '1',
    '-f',
    'image2pipe',
    '-c:v',
    'mjpeg',
    'pipe:1',
  ]);
const round = (v: number, d = 3) => Number(v.toFixed(d));
const cpuS = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

// What the detector keeps, not what this script has not collected yet (decoded test frames): a
// full collection before each reading (node's gc, reached without --expose-gc on the command line).
v8.setFlagsFromString('--expose-gc');
const gc: unknown = runInNewContext('gc');
const isCallable = (f: unknown): f is () => unknown => typeof f === 'function';
if (!isCallable(gc)) throw new Error('no gc function after --expose-gc');
const collect = () => void gc();
collect();
const rssBefore = process.memoryUsage().rss;
const pool = new DetectorPool({ threads: 1, queueSize: 64, floorScore: 0.1 });
const t0 = performance.now();
if ((await pool.started()) !== 'ready') throw new Error(`detector did not start: ${pool.stats().error}`);
const loadS = (performance.now() - t0) / 1000;
/** The raw detections in the one frame of a check. */
const checkOne = async (request: CheckRequest): Promise<RawDetection[]> => (await pool.check(request)).found[0] ?? [];

// One inference per check: a 512×512 region of a real photo.
const square = await decodeJpeg(jpeg('person.jpg'), { ...ffmpeg, size: { width: 512, height: 512 } });
await pool.check({ camera: 'warm-up', frames: [square], motion: null });
const inferMs: number[] = [];
for (let i = 0; i < runs; i++) {
  const t = performance.now();
  await pool.check({ camera: 'bench', frames: [square], motion: null });
  inferMs.push(performance.now() - t);
}
collect();
const rssAddedMb = (process.memoryUsage().rss - rssBefore) / 2 ** 20;

// A motion event: 3 frames of a 1280×720 camera.
const camera = await decodeJpeg(jpeg('kite.jpg'), { ...ffmpeg, size: { width: 1280, height: 720 } });
async function eventCost(motion: Box | null) {
  const cpu0 = cpuS();
  const t = performance.now();
  for (let i = 0; i < checksPerKind; i++)
    await pool.check({ camera: 'bench', frames: [camera, camera, camera], motion, keptWidth: KEPT_WIDTH });
  return {
    cpu_s: round((cpuS() - cpu0) / checksPerKind),
    wall_s: round((performance.now() - t) / 1000 / checksPerKind),
  };
}
const withRegion = await eventCost({ x: 0.45, y: 0.45, w: 0.1, h: 0.2 });
const withoutRegion = await eventCost(null);
// Of which the copy kept for the thumbnail (made in the worker, per frame).
const shrinkT0 = performance.now();
for (let i = 0; i < 20; i++) shrinkFrame(camera, KEPT_WIDTH);
const keptCopyMs = round((performance.now() - shrinkT0) / 20);

// Precision / recall on the labelled photos and on patterns with nothing in them.
interface Scene {
  name: string;
  bytes: Buffer;
  truth: { category: string; box: LabelBox }[];
}
const scenes: Scene[] = Object.entries(labelled).map(([name, truth]) => ({ name, bytes: jpeg(name), truth }));
for (const [name, source] of [
  ['bars', 'smptebars=s=1280x720'],
  ['testcard', 'testsrc2=s=1280x720'],
  ['noise', 'nullsrc=s=1280x720,geq=r=random(1)*255:g=random(2)*255:b=random(3)*255'],
] as const) {
  scenes.push({ name, bytes: pattern(source), truth: [] });
}
const found: { scene: Scene; raw: RawDetection[]; detections: Detection[] }[] = [];
for (const scene of scenes) {
  const frame = await decodeJpeg(scene.bytes, ffmpeg);
  const raw = await checkOne({ camera: 'bench', frames: [frame], motion: null });
  // As a check does it: labels, overlaps merged per category (min_score applied in score() below).
  found.push({ scene, raw, detections: suppressOverlaps(classify(raw, config.labels, 0), (d) => d.category) });
}
const overlap = (b: Box, [x, y, w, h]: LabelBox) => iou(b, { x, y, w, h });
const widened = ([x, y, w, h]: LabelBox): LabelBox => [x - w / 2, y - h / 2, x + w * 1.5, y + h * 1.5];
/** One figure for each category. */
const perCategory = <T>(of: (category: Category) => T): Record<Category, T> => ({
  human: of('human'),
  vehicle: of('vehicle'),
});
function score(minScore: number) {
  return perCategory((category) => {
    let tp = 0;
    let fp = 0;
    let truths = 0;
    for (const { scene, detections } of found) {
      const open = scene.truth
        .filter((t) => t.category === category)
        .map((t) => ({ box: t.box, area: widened(t.box) }));
      truths += open.length;
      for (const d of detections
        .filter((x) => x.category === category && x.score >= minScore)
        .sort((a, b) => b.score - a.score)) {
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
    return {
      precision: tp + fp ? round(tp / (tp + fp)) : 1,
      recall: truths ? round(tp / truths) : 1,
      tp,
      fp,
      objects: truths,
    };
  });
}
// Per photo, as an alert would see it: is a person (a vehicle) confirmed at the default min_score and
// threshold (the same frame three times: the median is that frame's best score)?
function events() {
  return perCategory((category) => {
    let tp = 0,
      fp = 0,
      fn = 0;
    for (const { scene, raw } of found) {
      const verdict = judgeCheck([raw, raw, raw], {
        labels: config.labels,
        minScore: config.min_score,
        threshold: config.threshold,
        zones: {},
        requiredZones: [],
      });
      const confirmed = verdict.medians[category] >= config.threshold;
      const present = scene.truth.some((t) => t.category === category);
      if (confirmed && present) tp++;
      else if (confirmed) fp++;
      else if (present) fn++;
    }
    return {
      precision: tp + fp ? round(tp / (tp + fp)) : 1,
      recall: tp + fn ? round(tp / (tp + fn)) : 1,
      tp,
      fp,
      fn,
      scenes: found.length,
    };
  });
}
const byScore = Object.fromEntries([0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6].map((s) => [s, score(s)]));
const stats = pool.stats();
await pool.close();

const p50 = round(percentile(inferMs, 50), 0);
const p95 = round(percentile(inferMs, 95), 0);
const perMinute = (cost: { cpu_s: number }) => round(60 / cost.cpu_s, 1);
const latencyS = Number(process.env.BENCH_LATENCY_S ?? 60);
const latency = latencyS > 0 ? await alertLatency({ photos, seconds: latencyS }) : null;
const alertLatencyJson = latency && {
  human_alerts: latency.human.length,
  motion_alerts: latency.motion,
  p50_s: latency.human.length ? round(percentile(latency.human, 50), 2) : null,
  max_s: latency.human.length ? round(Math.max(...latency.human), 2) : null,
  goal_met: latency.human.length > 0 && Math.max(...latency.human) <= 2,
};
const load = os.loadavg()[0] ?? 0;
console.log(
  `\nbench detect: CenterNet (COCO, 512×512) on tfjs-wasm, 1 worker thread, node ${process.version}, ${os.cpus().length} cores, load ${load.toFixed(1)}\n`,
);
console.log(
  `model load ${loadS.toFixed(1)} s; inference per 512 region p50 ${p50} ms, p95 ${p95} ms (${runs} runs); RSS added ${rssAddedMb.toFixed(0)} MB (goal <= 150)`,
);
console.log(
  `motion event (3 frames of 1280×720): with a moving area ${withRegion.cpu_s} CPU s (${perMinute(withRegion)} events/min/core); ONVIF motion, 2 tiles a frame ${withoutRegion.cpu_s} CPU s (${perMinute(withoutRegion)} events/min/core); of which the 640 px copy kept for the thumbnail ${keptCopyMs} ms a frame`,
);
for (const [s, r] of Object.entries(byScore)) {
  console.log(
    `min_score ${s.padEnd(4)} person P ${r.human.precision} R ${r.human.recall} (${r.human.tp}/${r.human.objects}, ${r.human.fp} false) | vehicle P ${r.vehicle.precision} R ${r.vehicle.recall} (${r.vehicle.tp}/${r.vehicle.objects}, ${r.vehicle.fp} false)`,
  );
}
const ev = events();
console.log(
  `per photo at min_score ${config.min_score} / threshold ${config.threshold}: person P ${ev.human.precision} R ${ev.human.recall} | vehicle P ${ev.vehicle.precision} R ${ev.vehicle.recall} (${found.length} scenes)`,
);
if (alertLatencyJson)
  console.log(
    `motion start → human alert (whole gateway): p50 ${alertLatencyJson.p50_s} s, max ${alertLatencyJson.max_s} s over ${alertLatencyJson.human_alerts} alerts (goal <= 2 s)`,
  );
console.log(
  JSON.stringify({
    bench: 'detect',
    model: 'centernet-mobilenetv3-coco-512',
    backend: 'tfjs-wasm-simd',
    cores: os.cpus().length,
    loadavg: round(load, 2),
    model_load_s: round(loadS, 2),
    infer_ms_p50: p50,
    infer_ms_p95: p95,
    rss_added_mb: round(rssAddedMb, 0),
    event_with_region: { ...withRegion, per_min_per_core: perMinute(withRegion) },
    kept_copy_ms_per_frame: keptCopyMs,
    event_without_region: { ...withoutRegion, per_min_per_core: perMinute(withoutRegion) },
    min_score: config.min_score,
    threshold: config.threshold,
    at_min_score: score(config.min_score),
    events_at_defaults: ev,
    by_score: byScore,
    dropped: stats.dropped,
    motion_to_alert: alertLatencyJson,
    goal_rss_met: rssAddedMb <= 150,
  }),
);
