// Benchmark: pan, tilt and zoom through the API as the web app calls it, and settings coming into
// effect. One simulated PTZ camera in this process, the gateway as its own process, HTTPS with
// keep-alive on loopback (a browser keeps its connection too).
// 1. A press (POST …/control ptz_move) until its ContinuousMove reaches the camera, and a release
//    (ptz_stop) until its Stop does, timed from the request's start to the camera's receipt; over
//    BENCH_PRESSES presses (default 50), each held 100 ms. Goal: p95 ≤ 100 ms on loopback.
// 2. Settings: PATCH motion_mask until answered (the store has committed it, and the detector and
//    the per-camera lookups read it at their next look); a new password until the camera is tried
//    with it (PATCH a wrong one until the device is unauthorized, the right one until online again).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Type from 'typebox';
import { DeviceSchema } from '../dist/api/schemas.js';
import { SimulatedCamera } from '../dist/onvif/simulator/camera.js';
import { httpsText, onlineDevice, startGatewayProcess } from './support/gateway-process.ts';
import { parseAs } from './support/json.ts';
import { percentile, round } from './support/stats.ts';

const presses = Number(process.env.BENCH_PRESSES ?? 50);
const GOAL_MS = 100;

const cam = new SimulatedCamera({ username: 'admin', password: 'admin' });
await cam.start();
const ptz = cam.ptz;
if (!ptz) throw new Error('the simulated camera has no PTZ');

const dir = mkdtempSync(path.join(os.tmpdir(), 'eg-bench-ptz-'));
const configFile = path.join(dir, 'config.yaml');
writeFileSync(
  configFile,
  `gateway:\n  data_dir: ${dir}/data\napi:\n  host: 127.0.0.1\n  port: 0\nrtsp:\n  host: 127.0.0.1\n  port: 0\n  udp_port: 0\n` +
    `onvif:\n  discovery:\n    enabled: false\nlog:\n  level: info\n`,
);
const gateway = await startGatewayProcess(configFile);
const ca = readFileSync(path.join(dir, 'data/tls/cert.pem'));
const token = gateway.token('devices:read devices:write');
const agent = new Agent({ keepAlive: true, ca, servername: 'localhost' });
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

/** One API request as the web app sends it; any status but 200 fails the bench. */
async function call(method: string, p: string, body?: object): Promise<string> {
  const res = await httpsText(
    new URL(p, gateway.apiUrl),
    { method, agent, headers },
    body === undefined ? undefined : JSON.stringify(body),
  );
  if (res.status !== 200) throw new Error(`${method} ${p}: ${res.status} ${res.body.slice(0, 300)}`);
  return res.body;
}

// The camera is added through the API, as the app's owner would.
const added = await httpsText(
  new URL('/v1/devices', gateway.apiUrl),
  { method: 'POST', agent, headers },
  JSON.stringify({ address: new URL(cam.baseUrl).host, username: 'admin', password: 'admin', name: 'Dome' }),
);
if (added.status !== 201) throw new Error(`POST /v1/devices: ${added.status} ${added.body}`);
const device = await onlineDevice(gateway, ca, token, 200);
const control = `/v1/devices/${device.id}/control`;

/** When each PTZ operation reached the camera (performance.now(), this process's clock as the requests'). */
const arrivals: Array<{ op: string; at: number }> = [];
ptz.onRequest((op, at) => arrivals.push({ op, at }));
const arrivalAfter = (op: string, t0: number) => arrivals.find((a) => a.op === op && a.at >= t0)?.at ?? null;

async function press(pan: number): Promise<{ move: number; stop: number; moveAnswer: number; stopAnswer: number }> {
  const t0 = performance.now();
  await call('POST', control, { action: 'ptz_move', pan, timeout_ms: 1000 });
  const moveAnswer = performance.now() - t0;
  await sleep(100);
  const t1 = performance.now();
  await call('POST', control, { action: 'ptz_stop' });
  const stopAnswer = performance.now() - t1;
  const moved = arrivalAfter('ContinuousMove', t0);
  const stopped = arrivalAfter('Stop', t1);
  if (moved === null || stopped === null) throw new Error('a PTZ request did not reach the camera');
  return { move: moved - t0, stop: stopped - t1, moveAnswer, stopAnswer };
}

for (let i = 0; i < 5; i++) await press(i % 2 ? 0.5 : -0.5); // warm-up: JIT, connections
const samples: Array<Awaited<ReturnType<typeof press>>> = [];
for (let i = 0; i < presses; i++) {
  samples.push(await press(i % 2 ? 0.5 : -0.5));
  arrivals.length = 0;
  await sleep(50);
}

// Settings: the mask (answered = committed), then a new password (tried at once by the manager).
const maskMs: number[] = [];
const masks = [
  [
    [
      [0, 0],
      [0.5, 0],
      [0.5, 0.2],
    ],
  ],
  [
    [
      [0.2, 0.2],
      [0.8, 0.2],
      [0.8, 0.9],
      [0.2, 0.9],
    ],
  ],
];
for (let i = 0; i < 20; i++) {
  const t0 = performance.now();
  await call('PATCH', `/v1/devices/${device.id}`, { motion_mask: masks[i % 2] });
  maskMs.push(performance.now() - t0);
}

const statusOf = async () =>
  parseAs(Type.Pick(DeviceSchema, ['status']), await call('GET', `/v1/devices/${device.id}`), 'the device').status;
async function untilStatus(status: string, t0: number): Promise<number> {
  while (performance.now() - t0 < 30_000) {
    if ((await statusOf()) === status) return performance.now() - t0;
    await sleep(5);
  }
  throw new Error(`the device did not become ${status}`);
}
const wrongMs: number[] = [];
const rightMs: number[] = [];
for (let i = 0; i < 5; i++) {
  let t0 = performance.now();
  await call('PATCH', `/v1/devices/${device.id}`, { username: 'admin', password: 'not-the-password' });
  wrongMs.push(await untilStatus('unauthorized', t0));
  t0 = performance.now();
  await call('PATCH', `/v1/devices/${device.id}`, { username: 'admin', password: 'admin' });
  rightMs.push(await untilStatus('online', t0));
}

agent.destroy();
await gateway.stop();
await cam.stop();
rmSync(dir, { recursive: true, force: true });

const p = (xs: number[], q: number) => round(percentile(xs, q), 1);
const of = (k: keyof (typeof samples)[number]) => samples.map((s) => s[k]);
const rows: Array<[string, number[]]> = [
  ['press → ContinuousMove at the camera', of('move')],
  ['release → Stop at the camera', of('stop')],
  ['press → API answer', of('moveAnswer')],
  ['release → API answer', of('stopAnswer')],
  ['PATCH motion_mask → answered (in effect)', maskMs],
  ['wrong password → device unauthorized', wrongMs],
  ['right password → device online', rightMs],
];
console.log(`\nbench ptz: ${presses} presses of 100 ms, node ${process.version}, ${os.cpus().length} cores\n`);
console.log('| measure                                   |   p50 ms |   p95 ms |');
console.log('|-------------------------------------------|----------|----------|');
for (const [name, xs] of rows)
  console.log(`| ${name.padEnd(41)} | ${String(p(xs, 50)).padStart(8)} | ${String(p(xs, 95)).padStart(8)} |`);
const moveMet = p(of('move'), 95) <= GOAL_MS;
const stopMet = p(of('stop'), 95) <= GOAL_MS;
console.log(`\ngoals: press → move p95 ≤ ${GOAL_MS} ms: ${moveMet}; release → stop p95 ≤ ${GOAL_MS} ms: ${stopMet}\n`);
console.log(
  JSON.stringify({
    bench: 'ptz',
    presses,
    move_p50_ms: p(of('move'), 50),
    move_p95_ms: p(of('move'), 95),
    stop_p50_ms: p(of('stop'), 50),
    stop_p95_ms: p(of('stop'), 95),
    move_answer_p95_ms: p(of('moveAnswer'), 95),
    stop_answer_p95_ms: p(of('stopAnswer'), 95),
    mask_patch_p50_ms: p(maskMs, 50),
    mask_patch_p95_ms: p(maskMs, 95),
    wrong_password_to_unauthorized_p50_ms: p(wrongMs, 50),
    right_password_to_online_p50_ms: p(rightMs, 50),
    goal_move_p95_met: moveMet,
    goal_stop_p95_met: stopMet,
  }),
);
process.exit(0);
