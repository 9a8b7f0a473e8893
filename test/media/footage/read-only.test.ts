import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../../../src/onvif/simulator/fleet.js';
import {
  createExt4Image,
  ext4ImageUnavailable,
  makeReadOnly,
  mountExt4Image,
  removeExt4Image,
  repairExt4Image,
  unmountExt4Image,
  type Ext4Image,
} from '../../support/ext4-image.js';
import { firstOnlineDevice, startTestGateway, type TestGateway } from '../../support/gateway.js';
import { tempDir } from '../../support/temp-dir.js';

// The footage disk turning read-only in the middle of a file, as an ext4 does at its first I/O error
// (errors=remount-ro; test/support/ext4-image.ts): the started gateway with a simulated camera, its
// continuous footage on an ext4 image of its own. While the disk takes no writes the daemon stays
// up, says why it is not recording, and live pictures, the API and event alerts (whose clips go to
// data_dir) go on. The disk then comes back as a real one would (unmounted, checked by e2fsck,
// mounted again): recording resumes, the files indexed before the failure are there and whole, and
// the index agrees with the disk.

const USER = 'admin';
const PASSWORD = 'cam-secret-read-only';
const unavailable = ext4ImageUnavailable();
if (unavailable) console.warn(`skipping the read-only footage disk test: ${unavailable}`);

let fleet: Fleet;
let t: TestGateway;
let dir = '';
let disk: Ext4Image | null = null;
let deviceId = '';

interface Status {
  recording: boolean;
  reason: string | null;
  cameras: Array<{ device_id: string; recording: boolean; files: number; reason: string | null }>;
}

async function status(): Promise<Status> {
  const res = await t.request('/v1/footage', { headers: await t.auth('recordings:read') });
  expect(res.status, res.text).toBe(200);
  return res.json() as Status;
}

async function filesIndexed(): Promise<number> {
  return (await status()).cameras.find((c) => c.device_id === deviceId)?.files ?? 0;
}

/** Every row of the footage index. */
function indexRows(): Array<{ name: string; bytes: number }> {
  return t.gw.store.oldestFootage(1_000_000).map((r) => ({ name: r.name, bytes: r.bytes }));
}

/** The footage files on the disk, as names under it (device/day/file). */
function filesOnDisk(): string[] {
  const out: string[] = [];
  const deviceDir = path.join(dir, deviceId);
  if (!existsSync(deviceDir)) return out;
  for (const day of readdirSync(deviceDir))
    for (const file of readdirSync(path.join(deviceDir, day)))
      if (file.endsWith('.mp4')) out.push(`${deviceId}/${day}/${file}`);
  return out;
}

// A file handle the gateway forgot stays open until the garbage collector closes it, with this
// warning: either shows the gateway holding on to the failed disk.
const closedByGc: string[] = [];
const onWarning = (w: Error) => {
  if (/on garbage collection/.test(w.message)) closedByGc.push(w.message);
};

/** Files this process (the gateway runs in it) holds open under the footage directory. */
function openUnderDisk(): string[] {
  const out: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(`${dir}/`)) out.push(target);
    } catch {
      // Closed since the directory was read (readdirSync's own descriptor, for one).
    }
  }
  return out;
}

const sha256 = (name: string) =>
  createHash('sha256')
    .update(readFileSync(path.join(dir, name)))
    .digest('hex');

describe.skipIf(unavailable !== null)('continuous recording when the footage disk turns read-only', () => {
  beforeAll(async () => {
    process.on('warning', onWarning);
    dir = tempDir();
    disk = createExt4Image(dir, 256 * 1024 * 1024);
    fleet = await startFleet({
      count: 1,
      host: '127.0.0.1',
      basePort: 0,
      username: USER,
      password: PASSWORD,
      discovery: null,
      rtspPort: 0,
      logger: pino({ level: process.env.SIM_LOG ?? 'silent' }),
    });
    t = await startTestGateway({
      cameras: [
        { name: 'Front door', onvif_url: fleet.cameras[0]!.deviceServiceUrl, username: USER, password: PASSWORD },
      ],
      // Short rolls: the event's clip is written soon after the event ends.
      recording: {
        pre_roll_s: 1,
        post_roll_s: 1,
        continuous: { enabled: true, storage_dir: dir, file_s: 10, flush_s: 1, min_free_bytes: 0 },
      },
    });
    deviceId = await firstOnlineDevice(t);
  }, 60_000);

  afterAll(async () => {
    process.off('warning', onWarning);
    // The gateway first: it closes its files, so the disk unmounts without waiting.
    await t?.stop();
    await fleet?.stop();
    try {
      if (disk) await removeExt4Image(disk);
    } finally {
      if (dir) rmdirSync(dir);
    }
  });

  it('stays up while the disk is read-only, serving live pictures, the API and alerts, and resumes when it is back', async () => {
    // Footage recorded and indexed, then a file being written when the disk fails.
    await expect.poll(filesIndexed, { timeout: 60_000, interval: 500 }).toBeGreaterThanOrEqual(2);
    await expect
      .poll(
        () => {
          const indexed = new Set(indexRows().map((r) => r.name));
          return filesOnDisk().some((f) => !indexed.has(f) && statSync(path.join(dir, f)).size > 0);
        },
        { timeout: 30_000, interval: 200 },
      )
      .toBe(true);
    const before = indexRows();
    expect(before.length).toBeGreaterThanOrEqual(2);
    const hashes = new Map(before.map((r) => [r.name, sha256(r.name)]));
    for (const r of before) expect(statSync(path.join(dir, r.name)).size, r.name).toBe(r.bytes);

    makeReadOnly(dir);

    // The daemon noticed, and says why.
    await expect
      .poll(async () => (await status()).reason ?? '', { timeout: 30_000, interval: 500 })
      .toMatch(/read_only/);
    const down = await status();
    expect(down.recording).toBe(false);
    expect(down.cameras.find((c) => c.device_id === deviceId)).toMatchObject({ recording: false });
    expect(down.cameras.find((c) => c.device_id === deviceId)?.reason).toMatch(/read_only/);
    expect(await t.metrics()).toMatch(/edge_gateway_footage_errors_total\{cause="read_only"\} [1-9]/);
    // It let go of the failed disk: the file it was writing is closed (by the gateway, not the
    // garbage collector), so the disk can be unmounted.
    await expect.poll(openUnderDisk, { timeout: 10_000, interval: 200 }).toEqual([]);
    expect(closedByGc).toEqual([]);

    // Live view and the API go on.
    const snapshot = await t.request(`/v1/devices/${deviceId}/snapshot`, { headers: await t.auth('devices:read') });
    expect(snapshot.status, snapshot.text).toBe(200);
    expect(snapshot.headers['content-type']).toBe('image/jpeg');
    const devices = await t.request('/v1/devices', { headers: await t.auth('devices:read') });
    expect(devices.status).toBe(200);
    expect((devices.json() as { data: Array<{ id: string; status: string }> }).data).toContainEqual(
      expect.objectContaining({ id: deviceId, status: 'online' }),
    );

    // An event still makes its alert, and its clip (written to data_dir, not the footage disk).
    const camera = fleet.cameras[0]!;
    camera.trigger('human', true);
    await new Promise((r) => setTimeout(r, 1500));
    camera.trigger('human', false);
    const alertsHeaders = await t.auth('alerts:read');
    const alert = async () => {
      const res = await t.request(`/v1/alerts?device_id=${deviceId}&type=human`, { headers: alertsHeaders });
      expect(res.status, res.text).toBe(200);
      return (res.json() as { data: Array<{ id: string; recording_status: string; recording_id: string | null }> })
        .data[0];
    };
    await expect
      .poll(async () => (await alert())?.recording_status, { timeout: 60_000, interval: 500 })
      .toBe('recorded');
    const recordingId = (await alert())!.recording_id!;
    const clip = await t.request(`/v1/recordings/${recordingId}/download`, {
      headers: await t.auth('recordings:write'),
    });
    expect(clip.status, clip.text).toBe(200);
    expect(clip.body.length).toBeGreaterThan(0);

    // Still not recording: the disk has not come back by itself.
    expect((await status()).recording).toBe(false);
    expect((await status()).reason).toMatch(/read_only/);

    // The disk comes back: unmounted (the gateway holds no file on it), checked, mounted again.
    const { lazy } = await unmountExt4Image(disk!);
    expect(lazy, 'the gateway kept a file open on the failed disk').toBe(false);
    repairExt4Image(disk!);
    mountExt4Image(disk!);

    await expect.poll(async () => (await status()).recording, { timeout: 90_000, interval: 1000 }).toBe(true);
    const filesBack = await filesIndexed();
    await expect.poll(filesIndexed, { timeout: 40_000, interval: 1000 }).toBeGreaterThan(filesBack);

    // The files indexed before the failure are there and whole.
    for (const r of before) {
      expect(existsSync(path.join(dir, r.name)), r.name).toBe(true);
      expect(statSync(path.join(dir, r.name)).size, r.name).toBe(r.bytes);
      expect(sha256(r.name), r.name).toBe(hashes.get(r.name));
    }
    // The index agrees with the disk: every indexed file is there, at its indexed size.
    const after = indexRows();
    expect(after.length).toBeGreaterThan(before.length);
    for (const r of after) {
      expect(existsSync(path.join(dir, r.name)), r.name).toBe(true);
      expect(statSync(path.join(dir, r.name)).size, r.name).toBe(r.bytes);
    }
    expect(after.map((r) => r.name)).toEqual(expect.arrayContaining(before.map((r) => r.name)));
  }, 300_000);
});
