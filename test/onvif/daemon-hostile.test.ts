import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedCamera } from '../../src/onvif/simulator/camera.js';
import { cliToken, startDaemon, type Daemon } from '../support/daemon.js';
import { tempDir } from '../support/temp-dir.js';
import { HostileCamera, type FailureMode } from '../support/hostile-camera.js';

// The built daemon (dist/cli.js) with hostile cameras and a simulated one in its config: cameras
// that break operations in every way, and a reboot followed by sync_time while
// the camera is down, must leave the process running, the API answering and the fatal handler
// untouched. The handler itself is shown to work on a process that does throw.

const MAIN = path.resolve(import.meta.dirname, '../../dist/main.js');
const HOSTILE: Array<[string, Record<string, FailureMode>]> = [
  [
    'Broken events',
    { CreatePullPointSubscription: 'missing-fields', SetSystemDateAndTime: 'empty-body', SystemReboot: 'html-500' },
  ],
  [
    'Broken media',
    { GetServices: 'wrong-namespace', GetProfiles: 'truncated', SystemReboot: 'reset', SetSystemDateAndTime: 'cut' },
  ],
  [
    'Broken pull',
    {
      GetStreamUri: 'cut',
      GetSnapshotUri: 'not-soap',
      PullMessages: 'reset',
      Renew: 'fault',
      SetSystemDateAndTime: 'hang',
    },
  ],
  [
    'Refuses much',
    {
      GetSystemDateAndTime: 'fault',
      GetServices: 'fault',
      GetCapabilities: 'fault',
      GetProfiles: 'fault',
      SystemReboot: 'fault',
    },
  ],
  [
    'Broken clock',
    { GetSystemDateAndTime: 'truncated', PullMessages: 'missing-fields', SetSystemDateAndTime: 'not-soap' },
  ],
];

let dir = '';
let configFile = '';
let daemon: Daemon;
let yard: SimulatedCamera;
const hostile: HostileCamera[] = [];
let headers: Record<string, string> = {};
type ApiDevice = { id: string; name: string; status: string; model: string | null };

beforeAll(async () => {
  dir = tempDir('eg-hostile-');
  yard = new SimulatedCamera({ username: 'admin', password: 'pw', rebootMs: 3000 });
  await yard.start();
  for (const [, breaks] of HOSTILE) {
    const cam = new HostileCamera();
    for (const [op, mode] of Object.entries(breaks)) cam.breaks.set(op, mode);
    await cam.start();
    hostile.push(cam);
  }
  const dataDir = path.join(dir, 'data');
  configFile = path.join(dir, 'config.yaml');
  const config = {
    gateway: { data_dir: dataDir },
    api: { host: '127.0.0.1', port: 0 },
    auth: { local: { issuer: 'https://127.0.0.1:8443' } },
    rtsp: { host: '127.0.0.1', port: 0, udp_port: 0, public_host: '127.0.0.1' },
    onvif: { discovery: { enabled: false }, health_interval_s: 1 },
    cameras: [
      { name: 'Yard', onvif_url: yard.deviceServiceUrl, username: 'admin', password: 'pw' },
      ...HOSTILE.map(([name], i) => ({
        name,
        onvif_url: hostile[i]!.deviceServiceUrl,
        username: 'admin',
        password: 'pw',
      })),
    ],
    recording: { segment_dir: path.join(dir, 'segments'), motion: { mode: 'off' } },
    log: { level: 'info' },
  };
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  // Before the daemon starts: the token command blocks this process, which serves the cameras.
  headers = { authorization: `Bearer ${cliToken(configFile, dir, 'devices:read devices:write')}` };
  daemon = await startDaemon(configFile, { cwd: dir, certFile: () => path.join(dataDir, 'tls', 'cert.pem') });
});

afterAll(async () => {
  if (daemon?.child.exitCode === null) {
    daemon.child.kill('SIGTERM');
    await daemon.exited;
  }
  await yard?.stop();
  for (const cam of hostile) await cam.stopListening();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const devices = async (): Promise<ApiDevice[]> => {
  const res = await daemon.request('/v1/devices', { headers });
  expect(res.status).toBe(200);
  return (res.json() as { data: ApiDevice[] }).data;
};
const idOf = async (name: string) => (await devices()).find((d) => d.name === name)?.id ?? '';
const control = (id: string, action: 'reboot' | 'sync_time') =>
  daemon.request(`/v1/devices/${id}/control`, { method: 'POST', headers, body: { action } });
const stillAlive = async () => {
  expect(daemon.child.exitCode).toBeNull();
  expect((await devices()).length).toBe(HOSTILE.length + 1);
  expect(daemon.logged('uncaught exception')).toEqual([]);
};

describe('the daemon with hostile cameras', () => {
  it('adopts what the hostile cameras answer and keeps serving the API while they misbehave', async () => {
    await expect
      .poll(
        async () =>
          (await devices())
            .filter((d) => d.status === 'online')
            .map((d) => d.name)
            .sort(),
        { timeout: 45_000, interval: 300 },
      )
      .toEqual(['Yard', ...HOSTILE.map(([n]) => n)].sort());
    // Let the broken subscriptions, pulls and renewals fail a few rounds.
    await expect
      .poll(() => hostile[0]!.calls.get('CreatePullPointSubscription') ?? 0, { timeout: 20_000 })
      .toBeGreaterThan(1);
    await expect.poll(() => hostile[2]!.calls.get('PullMessages') ?? 0, { timeout: 20_000 }).toBeGreaterThan(1);
    await stillAlive();
  }, 90_000);

  it('answers control requests on hostile cameras: 502 for a bad answer, a failed request for none, never a crash', async () => {
    const OPS = { sync_time: 'SetSystemDateAndTime', reboot: 'SystemReboot' } as const;
    for (const [name, breaks] of HOSTILE) {
      const id = await idOf(name);
      for (const action of ['sync_time', 'reboot'] as const) {
        const mode = breaks[OPS[action]];
        const res = await control(id, action);
        const got = `${res.status} ${res.status === 200 ? (res.json() as { status: string }).status : (res.json() as { error: string }).error}`;
        const want =
          mode === undefined
            ? '200 succeeded'
            : ['hang', 'reset', 'cut'].includes(mode)
              ? '200 failed'
              : '502 device_error';
        expect(got, `${name} ${action} (${mode ?? 'not broken'}): ${res.text}`).toBe(want);
      }
    }
    await stillAlive();
  }, 90_000);

  it('survives reboot then sync_time one second later while the camera is rebooting', async () => {
    await expect
      .poll(async () => (await devices()).find((d) => d.name === 'Yard')?.status, { timeout: 20_000 })
      .toBe('online');
    const id = await idOf('Yard');
    const reboot = await control(id, 'reboot');
    expect(reboot.status).toBe(200);
    expect((reboot.json() as { status: string }).status).toBe('succeeded');
    await new Promise((r) => setTimeout(r, 1000));
    expect(yard.rebooting).toBe(true);
    const sync = await control(id, 'sync_time');
    // Still listed online (the health check has not noticed yet): a failed request; already offline: 409.
    expect([200, 409], sync.text).toContain(sync.status);
    if (sync.status === 200) expect(sync.json()).toMatchObject({ action: 'sync_time', status: 'failed' });
    await stillAlive();
    await expect
      .poll(async () => (await devices()).find((d) => d.name === 'Yard')?.status, { timeout: 30_000 })
      .toBe('online');
    await stillAlive();
  }, 90_000);
});

describe('the fatal handler', () => {
  it.each([
    [
      'a thrown exception',
      "setTimeout(() => { throw new Error('boom from a timer'); }, 10);",
      'boom from a timer',
      'uncaughtException',
    ],
    [
      'an unhandled rejection',
      "Promise.reject(new Error('boom from a promise'));",
      'boom from a promise',
      'unhandledRejection',
    ],
  ])(
    'logs %s with its stack at fatal level and exits non-zero',
    async (_name, crash, message, origin) => {
      const script = `import { pino } from 'pino'; import { installFatalHandlers } from ${JSON.stringify(MAIN)}; installFatalHandlers(pino()); ${crash}`;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        cwd: path.resolve(import.meta.dirname, '../..'),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
      expect(code).toBe(70);
      const line = out.split('\n').find((l) => l.includes('"uncaught exception"'));
      expect(line, out).toBeDefined();
      const entry = JSON.parse(line!) as { level: number; origin: string; err: { message: string; stack: string } };
      expect(entry).toMatchObject({ level: 60, origin, err: { message } });
      expect(entry.err.stack).toContain(message);
      expect(entry.err.stack).toMatch(/\n\s+at /);
    },
    60_000,
  );
});
