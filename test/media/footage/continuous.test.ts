import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../../../src/onvif/simulator/fleet.js';
import { probeClip } from '../../support/daemon.js';
import { firstOnlineDevice, startTestGateway, type TestGateway } from '../../support/gateway.js';
import { tempDir } from '../../support/temp-dir.js';
import { jpegSize } from '../still/jpeg-size.js';
import { mountTmpfs, tmpfsUnavailable, unmountTmpfs } from '../../support/tmpfs.js';

// Continuous recording on the started gateway: a simulated camera through the relay, its footage on
// a tmpfs mounted for the test (another device than the system's, as a USB disk would be), the index
// in the gateway's SQLite file, and the footage API over real HTTPS: the spans kept, a window
// downloaded as one MP4 (ffprobe reads and decodes it) or through a download_url, played, pictured,
// bad windows refused, the disk filled and unmounted while recording and back (read-only:
// read-only.test.ts).

const run = promisify(execFile);
const USER = 'admin';
const PASSWORD = 'cam-secret-footage';
const unavailable = tmpfsUnavailable();
if (unavailable) console.warn(`skipping the continuous recording tests: ${unavailable}`);

let fleet: Fleet;
let t: TestGateway;
let disk: string;
let deviceId = '';

interface Span {
  start: string;
  end: string;
}

async function spans(startMs: number, endMs: number, device = deviceId) {
  const q = `start=${new Date(startMs).toISOString()}&end=${new Date(endMs).toISOString()}`;
  return t.request(`/v1/devices/${device}/footage?${q}`, { headers: await t.auth('recordings:read') });
}

async function status() {
  const res = await t.request('/v1/footage', { headers: await t.auth('recordings:read') });
  expect(res.status, res.text).toBe(200);
  return res.json() as {
    enabled: boolean;
    recording: boolean;
    reason: string | null;
    disk: { source: string | null };
    cameras: Array<{ device_id: string; recording: boolean; files: number; reason: string | null }>;
  };
}

/** The footage kept now: one span once the camera has recorded for a while. */
async function keptSpans(): Promise<Span[]> {
  const now = Date.now();
  const res = await spans(now - 3_600_000, now + 60_000);
  expect(res.status, res.text).toBe(200);
  return (res.json() as { data: Span[] }).data;
}

// Node warns when the garbage collector closes a file handle nobody closed (DEP0137): a file of the
// footage disk left open after a failure would show here (the gateway runs in this process).
const leakedHandles: string[] = [];
process.on('warning', (w) => {
  if (w.message.includes('Closing file descriptor') || ('code' in w && w.code === 'DEP0137'))
    leakedHandles.push(w.message);
});

describe.skipIf(unavailable !== null)('continuous recording to a second disk', () => {
  beforeAll(async () => {
    disk = tempDir();
    mountTmpfs(disk, 512 * 1024 * 1024);
    const logger = pino({ level: process.env.SIM_LOG ?? 'silent' });
    fleet = await startFleet({
      count: 1,
      host: '127.0.0.1',
      basePort: 0,
      username: USER,
      password: PASSWORD,
      discovery: null,
      rtspPort: 0,
      logger,
    });
    t = await startTestGateway({
      cameras: [
        { name: 'Front door', onvif_url: fleet.cameras[0]!.deviceServiceUrl, username: USER, password: PASSWORD },
      ],
      recording: { continuous: { enabled: true, storage_dir: disk, file_s: 10, flush_s: 1, min_free_bytes: 0 } },
    });
    deviceId = await firstOnlineDevice(t);
  }, 60_000);

  afterAll(async () => {
    await t?.stop();
    await fleet?.stop();
    if (disk) {
      unmountTmpfs(disk);
      rmdirSync(disk);
    }
  });

  it('keeps the camera in files on the footage disk, indexed, and lists them as one span', async () => {
    await expect.poll(async () => (await keptSpans()).length, { timeout: 40_000, interval: 500 }).toBe(1);
    await expect
      .poll(async () => (await status()).cameras.find((c) => c.device_id === deviceId)?.files ?? 0, {
        timeout: 30_000,
        interval: 500,
      })
      .toBeGreaterThanOrEqual(2);
    const [span] = await keptSpans();
    const lengthS = (Date.parse(span!.end) - Date.parse(span!.start)) / 1000;
    expect(lengthS).toBeGreaterThan(15);
    expect(Date.parse(span!.end)).toBeLessThanOrEqual(Date.now());
    // Files under the camera's folder, by UTC day.
    const days = readdirSync(path.join(disk, deviceId));
    expect(days.length).toBeGreaterThanOrEqual(1);
    expect(readdirSync(path.join(disk, deviceId, days[0]!)).some((f) => /^(sub|main)-\d+\.mp4$/.test(f))).toBe(true);
    const s = await status();
    expect(s).toMatchObject({ enabled: true, recording: true, reason: null, disk: { source: 'tmpfs' } });
  }, 90_000);

  it('downloads a window across files as one MP4 that ffprobe reads and ffmpeg decodes', async () => {
    const [span] = await keptSpans();
    // Whole seconds, as a download_url's ticket names its window: both give the same MP4.
    const start = Math.ceil(Date.parse(span!.start) / 1000) * 1000 + 2000;
    const end = Math.min(Math.floor(Date.parse(span!.end) / 1000) * 1000, start + 14_000);
    const url = `/v1/devices/${deviceId}/footage/download?start=${new Date(start).toISOString()}&end=${new Date(end).toISOString()}`;
    const headers = await t.auth('recordings:write');
    const res = await t.request(url, { headers });
    expect(res.status, res.text).toBe(200);
    expect(res.headers['content-type']).toBe('video/mp4');
    expect(res.headers['content-disposition']).toMatch(
      /^attachment; filename="Front-door-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.mp4"$/,
    );
    expect(Number(res.headers['content-length'])).toBe(res.body.length);
    const file = path.join(tempDir(), 'export.mp4');
    writeFileSync(file, res.body);
    const probed = await probeClip(file);
    expect(probed.codec).toBe('h264');
    expect(probed.decodeErrors).toBe('');
    // From the keyframe at or before start (the simulator's GOP is at most 2 s) to the end.
    expect(probed.durationS).toBeGreaterThan((end - start) / 1000 - 0.5);
    expect(probed.durationS).toBeLessThan((end - start) / 1000 + 2.5);

    const head = await t.request(url, { method: 'HEAD', headers });
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(res.headers['content-length']);
    const part = await t.request(url, { headers: { ...headers, range: 'bytes=100-4099' } });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 100-4099/${res.body.length}`);
    expect(part.body.equals(res.body.subarray(100, 4100))).toBe(true);
    // recordings:read may look, not download.
    expect((await t.request(url, { headers: await t.auth('recordings:read') })).status).toBe(403);

    // The same MP4 through a download_url, which a download link fetches without the token.
    const exportUrl = url.replace('/footage/download?', '/footage/export?');
    expect((await t.request(exportUrl, { headers: await t.auth('recordings:read') })).status).toBe(403);
    const minted = await t.request(exportUrl, { headers });
    expect(minted.status, minted.text).toBe(200);
    const { download_url: downloadUrl } = minted.json() as { download_url: string };
    expect(downloadUrl).toMatch(/^\/v1\/footage\/export\/[A-Za-z0-9_.-]+$/);
    const viaTicket = await t.request(downloadUrl);
    expect(viaTicket.status, viaTicket.text).toBe(200);
    expect(viaTicket.headers['content-disposition']).toBe(res.headers['content-disposition']);
    expect(viaTicket.headers['cache-control']).toBe('private, no-store');
    expect(viaTicket.body.equals(res.body)).toBe(true);
    const ranged = await t.request(downloadUrl, { headers: { range: 'bytes=100-4099' } });
    expect(ranged.status).toBe(206);
    expect(ranged.body.equals(res.body.subarray(100, 4100))).toBe(true);
    // A playback ticket of the same window (recordings:read) does not download.
    const played = await t.request(exportUrl.replace('/footage/export?', '/footage/playback?'), {
      headers: await t.auth('recordings:read'),
    });
    const playTicket = (played.json() as { playback_url: string }).playback_url.split('/')[4]!;
    const refused = await t.request(`/v1/footage/export/${playTicket}`);
    expect(refused.status).toBe(403);
    expect((refused.json() as { error: string }).error).toBe('invalid_ticket');
  }, 60_000);

  it('plays a window from a ticketed HLS playlist of byte ranges that ffprobe reads across files', async () => {
    const [span] = await keptSpans();
    const start = Date.parse(span!.start) + 1000;
    const end = Math.min(Date.parse(span!.end), start + 15_000);
    const q = `start=${new Date(start).toISOString()}&end=${new Date(end).toISOString()}`;
    const res = await t.request(`/v1/devices/${deviceId}/footage/playback?${q}`, {
      headers: await t.auth('recordings:read'),
    });
    expect(res.status, res.text).toBe(200);
    const { playback_url: url, expires_at: expires } = res.json() as { playback_url: string; expires_at: string };
    expect(url).toMatch(/^\/v1\/footage\/play\/[A-Za-z0-9_.-]+\/index\.m3u8$/);
    expect(Date.parse(expires)).toBeGreaterThan(Date.now());
    // No token: the ticket is the credential.
    const playlist = await t.request(url);
    expect(playlist.status, playlist.text).toBe(200);
    expect(playlist.headers['content-type']).toMatch(/^application\/vnd\.apple\.mpegurl/);
    expect(playlist.headers['cache-control']).toBe('private, no-store');
    expect(playlist.text).toMatch(/^#EXTM3U\n/);
    expect(playlist.text).toMatch(/#EXT-X-MAP:URI="file\/\d+\.mp4",BYTERANGE="\d+@0"/);
    expect(playlist.text).toMatch(/#EXT-X-BYTERANGE:\d+@\d+\nfile\/\d+\.mp4/);
    expect(playlist.text.trimEnd().endsWith('#EXT-X-ENDLIST')).toBe(true);
    const files = new Set([...playlist.text.matchAll(/^file\/(\d+)\.mp4$/gm)].map((m) => m[1]));
    expect(files.size).toBeGreaterThanOrEqual(2);
    // ffprobe plays it as a player would: the playlist, then byte ranges of the files.
    // Not execFileSync: the gateway answering ffprobe runs in this process.
    const { stdout: out } = await run('ffprobe', [
      '-v',
      'error',
      '-tls_verify',
      '0',
      '-show_entries',
      'format=duration',
      '-of',
      'csv=p=0',
      `${t.gw.apiUrl}${url}`,
    ]);
    expect(Number(out.trim())).toBeGreaterThan((end - start) / 1000 - 0.5);
    // A file of another device or window, and a tampered ticket, are refused.
    const ticket = url.split('/')[4]!;
    expect((await t.request(`/v1/footage/play/${ticket}/file/999999.mp4`)).status).toBe(404);
    const forged = `${ticket.slice(0, -2)}${ticket.endsWith('AA') ? 'AB' : 'AA'}`;
    expect((await t.request(`/v1/footage/play/${forged}/index.m3u8`)).status).toBe(403);
    const part = await t.request(`/v1/footage/play/${ticket}/file/${[...files][0]}.mp4`, {
      headers: { range: 'bytes=0-99' },
    });
    expect(part.status).toBe(206);
    expect(part.body.length).toBe(100);
  }, 60_000);

  it('pictures a moment: the keyframe at or before it, as a JPEG of the width asked, made once', async () => {
    const [span] = await keptSpans();
    const at = Date.parse(span!.start) + 5500;
    const url = `/v1/devices/${deviceId}/footage/frame?at=${new Date(at).toISOString()}&width=320`;
    const headers = await t.auth('recordings:read');
    const first = await t.request(url, { headers });
    expect(first.status, first.text).toBe(200);
    expect(first.headers['content-type']).toBe('image/jpeg');
    expect(jpegSize(first.body)?.width).toBe(320);
    const shown = Date.parse(first.headers['x-picture-time'] as string);
    expect(shown).toBeLessThanOrEqual(at);
    expect(at - shown).toBeLessThan(10_000);
    // A moment in the same group of pictures: the same picture, not decoded again.
    const again = await t.request(
      `/v1/devices/${deviceId}/footage/frame?at=${new Date(shown + 1).toISOString()}&width=320`,
      { headers },
    );
    expect(again.headers.etag).toBe(first.headers.etag);
    // Before the footage: nothing to show.
    const before = await t.request(
      `/v1/devices/${deviceId}/footage/frame?at=${new Date(Date.parse(span!.start) - 60_000).toISOString()}`,
      { headers },
    );
    expect(before.status).toBe(404);
    for (const bad of [
      'at=soon',
      `at=${new Date(at).toISOString()}&width=5`,
      `at=${new Date(at).toISOString()}&width=abc`,
      '',
    ]) {
      expect((await t.request(`/v1/devices/${deviceId}/footage/frame?${bad}`, { headers })).status, bad).toBe(400);
    }
  }, 60_000);

  it('refuses bad windows with the usual error body, never a 500', async () => {
    const now = Date.now();
    const bad = [
      [`start=${new Date(now).toISOString()}&end=${new Date(now - 1000).toISOString()}`, 400],
      [`start=${new Date(now - 25 * 3_600_000).toISOString()}&end=${new Date(now).toISOString()}`, 400],
      ['start=yesterday&end=today', 400],
      ['start=2026-02-30T00:00:00Z&end=2026-03-01T00:00:00Z', 400],
      [`start=${new Date(now - 1000).toISOString()}`, 400],
    ] as const;
    for (const [query, code] of bad) {
      for (const route of ['footage', 'footage/download', 'footage/export']) {
        const res = await t.request(`/v1/devices/${deviceId}/${route}?${query}`, {
          headers: await t.auth('recordings:read recordings:write'),
        });
        expect(res.status, `${route}?${query}: ${res.text}`).toBe(code);
        expect((res.json() as { error: string }).error).toBe('invalid_request');
      }
    }
    expect((await spans(now - 1000, now, 'dev_nope')).status).toBe(404);
    // A window with nothing in it: no spans, and nothing to download.
    const empty = await spans(now - 48 * 3_600_000, now - 47 * 3_600_000);
    expect(empty.json()).toEqual({ data: [] });
    const q = `start=${new Date(now - 48 * 3_600_000).toISOString()}&end=${new Date(now - 47 * 3_600_000).toISOString()}`;
    expect(
      (await t.request(`/v1/devices/${deviceId}/footage/download?${q}`, { headers: await t.auth('recordings:write') }))
        .status,
    ).toBe(404);
    expect(
      (await t.request(`/v1/devices/${deviceId}/footage/export?${q}`, { headers: await t.auth('recordings:write') }))
        .status,
    ).toBe(404);
  }, 30_000);

  it('stops when the disk fills up and resumes once it has room, the API answering all along', async () => {
    const filler = path.join(disk, 'filler');
    // Fill what is left of the tmpfs: the next footage write gets ENOSPC from the kernel.
    // dd stops with "No space left on device": the disk is full, as wanted.
    await run('dd', ['if=/dev/zero', `of=${filler}`, 'bs=1M', 'status=none']).catch(() => undefined);
    try {
      await expect
        .poll(async () => (await status()).reason ?? '', { timeout: 40_000, interval: 500 })
        .toMatch(/disk_full/);
      expect((await status()).recording).toBe(false);
      expect((await keptSpans()).length).toBeGreaterThanOrEqual(1);
      expect(await t.metrics()).toMatch(/edge_gateway_footage_errors_total\{cause="disk_full"\} [1-9]/);
    } finally {
      rmSync(filler, { force: true });
    }
    await expect.poll(async () => (await status()).recording, { timeout: 90_000, interval: 1000 }).toBe(true);
    const filesBefore = (await status()).cameras.find((c) => c.device_id === deviceId)?.files ?? 0;
    await expect
      .poll(async () => (await status()).cameras.find((c) => c.device_id === deviceId)?.files ?? 0, {
        timeout: 40_000,
        interval: 1000,
      })
      .toBeGreaterThan(filesBefore);
  }, 180_000);

  it('stops when the disk is unmounted (never writing to the mount point left on the system disk) and resumes on the disk mounted again', async () => {
    unmountTmpfs(disk);
    try {
      await expect
        .poll(async () => (await status()).reason ?? '', { timeout: 40_000, interval: 500 })
        .toMatch(/disk_missing|system disk/);
      // Long enough for files to close: nothing lands in the empty mount point.
      await new Promise((r) => setTimeout(r, 12_000));
      expect(readdirSync(disk)).toEqual([]);
      expect((await status()).recording).toBe(false);
    } finally {
      mountTmpfs(disk, 512 * 1024 * 1024);
    }
    await expect.poll(async () => (await status()).recording, { timeout: 90_000, interval: 1000 }).toBe(true);
    await expect.poll(() => readdirSync(disk).includes(deviceId), { timeout: 40_000, interval: 1000 }).toBe(true);
    // The index agrees with the new disk: the footage of the old one is gone from it.
    await expect
      .poll(async () => (await status()).cameras.find((c) => c.device_id === deviceId)?.files ?? 0, {
        timeout: 40_000,
        interval: 1000,
      })
      .toBeGreaterThanOrEqual(1);
  }, 180_000);

  it('left no file handle to the garbage collector, through the failures above', () => {
    expect(leakedHandles).toEqual([]);
  });
});

describe('continuous recording on the system disk', () => {
  it('refuses to start, naming the key and the disk, unless allow_on_system_disk says so', async () => {
    const dataDir = tempDir();
    const storage = path.join(dataDir, 'footage');
    mkdirSync(storage);
    await expect(
      startTestGateway({ recording: { continuous: { enabled: true, storage_dir: storage } } }, { dataDir }),
    ).rejects.toThrow(/recording\.continuous\.storage_dir .* is on the system disk .*allow_on_system_disk/);
    const t2 = await startTestGateway(
      {
        recording: {
          continuous: { enabled: true, storage_dir: storage, allow_on_system_disk: true, min_free_bytes: 0 },
        },
      },
      { dataDir },
    );
    try {
      const res = await t2.request('/v1/footage', { headers: await t2.auth('recordings:read') });
      expect(res.json()).toMatchObject({ enabled: true, recording: true });
    } finally {
      await t2.stop();
    }
  }, 60_000);
});
