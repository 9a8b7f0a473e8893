// Benchmark: motion start → classified alert through the whole gateway (bench/support/detect-latency.ts
// says how), alone; `npm run bench -- detect` runs it too. Env: BENCH_LATENCY_S (default 60).
// Prints a table and a JSON line.
import os from 'node:os';
import { alertLatency, testPhotos } from './support/detect-latency.ts';
import { percentile } from './support/stats.ts';

const photos = testPhotos();
const seconds = Number(process.env.BENCH_LATENCY_S ?? 60);
const load = os.loadavg()[0] ?? 0;
const r = await alertLatency({ photos, seconds });
const round = (v: number) => Number(v.toFixed(2));
const p50 = r.human.length ? round(percentile(r.human, 50)) : null;
const max = r.human.length ? round(Math.max(...r.human)) : null;
console.log(
  `\nbench detect-latency: motion start → classified alert, whole gateway, ${seconds} s of a looping scene, load ${load.toFixed(1)}\n`,
);
console.log(
  `human alerts ${r.human.length}, motion alerts ${r.motion}; seen by the API after p50 ${p50 ?? '-'} s, max ${max ?? '-'} s (goal <= 2 s)`,
);
console.log('\nstage (ms after the motion start, median)');
for (const [stage, ms] of Object.entries(r.stages))
  console.log(`  ${stage.padEnd(18)} ${String(Math.round(ms)).padStart(6)}`);
console.log(
  JSON.stringify({
    bench: 'detect-latency',
    cores: os.cpus().length,
    loadavg_start: round(load),
    loadavg: round(os.loadavg()[0] ?? 0),
    seconds,
    human_alerts: r.human.length,
    motion_alerts: r.motion,
    p50_s: p50,
    max_s: max,
    latencies_s: r.human.map(round),
    alert_written_ms: r.written,
    stages_ms_p50: Object.fromEntries(Object.entries(r.stages).map(([k, v]) => [k, Math.round(v)])),
    goal_met: r.human.length > 0 && Math.max(...r.human) <= 2,
  }),
);
