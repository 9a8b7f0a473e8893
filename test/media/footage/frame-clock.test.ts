import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSpropParameterSets } from '../../../src/media/h26x.js';
import { createRtpHeader, readRtpHeaderInto } from '../../../src/media/rtp.js';
import { mediaCodecs, parseSdp } from '../../../src/media/sdp.js';
import { VideoDepacketizer } from '../../../src/media/video-depacketizer.js';
import { CLOCK_STRIP } from '../../../src/onvif/simulator/rtsp.js';
import { startFootageRig, type FootageRig } from '../../support/footage-rig.js';
import type { TestGateway } from '../../support/gateway.js';
import { TestRtspClient } from '../../support/rtsp-client.js';
import { tmpfsUnavailable } from '../../support/tmpfs.js';
import { jpegSize } from '../still/jpeg-size.js';

// The picture of a moment of continuous footage is the camera's picture of that moment. The simulated
// camera burns its wall clock into each main picture (CLOCK_STRIP); the gateway keeps the main stream
// on a tmpfs footage disk; for a few moments T the JPEG of `footage/frame?at=T` (full size) is decoded
// by ffmpeg and its clock read back, and so are the pictures of the footage files themselves.
//
// The picture must be the keyframe the footage holds at X-Picture-Time, the last one at or before T,
// and the footage must be dated when the camera's pictures reached the gateway. That last one needs
// the camera's delay, which is not nil: the simulator's RTSP server holds pictures in a jitter buffer
// paced by their RTP times (counted in frames from a start that varies from run to run), so they come
// 100-400 ms after their burnt-in clock; and on a busy machine its encoder falls behind and catches
// up, when a picture's clock strays from its media time, by which footage is dated within a file. So
// a viewer of the relay in this process (as the gateway's own reader is) notes when each keyframe
// arrives, and the footage's date of each of those pictures must be that arrival, within a frame or
// two, taken over them all (the median: a stray picture does not decide).

const PASSWORD = 'cam-secret-frame-clock';
/** The simulated camera's live encoder: 15 frames/s, a keyframe every 15 frames (src/onvif/simulator/rtsp.ts). */
const FRAME_MS = 1000 / 15;
const GOP_MS = 1000;
/** The clock strip counts ms modulo this. */
const CLOCK_MODULO = 2 ** CLOCK_STRIP.bits;
const STRIP_WIDTH = CLOCK_STRIP.bits * CLOCK_STRIP.pitch;
const START_CODE = Buffer.from([0, 0, 0, 1]);
const unavailable = tmpfsUnavailable();
if (unavailable) console.warn(`skipping the footage frame clock test: ${unavailable}`);

let rig: FootageRig;
let t: TestGateway;
let disk = '';
let deviceId = '';

interface Span {
  start: string;
  end: string;
}

/** A moment asked for, and what the gateway answered. */
interface Asked {
  at: number;
  /** X-Picture-Time, ms. */
  shown: number;
  /** The clock burnt into the picture answered, unwrapped near `at`. */
  clock: number;
}

/** A picture of a footage file. */
interface DatedFrame {
  /** When the footage says it was: the file's start (its name) plus its presentation time after the first picture's. */
  datedMs: number;
  /** Its burnt-in clock, ms modulo CLOCK_MODULO. */
  clock: number;
  key: boolean;
}

/** A keyframe seen by the test's viewer: when its last packet arrived, and its burnt-in clock (modulo CLOCK_MODULO). */
interface ArrivedKeyframe {
  arrivedMs: number;
  clock: number;
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN;

async function spans(): Promise<Span[]> {
  const now = Date.now();
  const q = `start=${new Date(now - 3_600_000).toISOString()}&end=${new Date(now + 60_000).toISOString()}`;
  const res = await t.request(`/v1/devices/${deviceId}/footage?${q}`, { headers: await t.auth('recordings:read') });
  expect(res.status, res.text).toBe(200);
  return (res.json() as { data: Span[] }).data;
}

/** ffmpeg fed `input` on stdin: its stdout and its log (never a blocking call: the gateway runs in this process). */
function ffmpeg(args: readonly string[], input: Buffer | null): Promise<{ out: Buffer; log: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('ffmpeg', ['-hide_banner', '-nostats', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let log = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (log += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve({ out: Buffer.concat(out), log })
        : reject(new Error(`ffmpeg exited ${code}: ${log.slice(-500)}`)),
    );
    child.stdin.end(input ?? undefined);
  });
}

/** The clock of a grey picture `width` pixels wide starting at `at` in `pixels`, whose first row is `top`. */
function clockIn(pixels: Buffer, at: number, width: number, top: number): number {
  const row = at + (CLOCK_STRIP.y - top + (CLOCK_STRIP.size >> 1)) * width;
  let clock = 0;
  for (let k = 0; k < CLOCK_STRIP.bits; k++)
    if (pixels[row + k * CLOCK_STRIP.pitch + (CLOCK_STRIP.size >> 1)]! > 128) clock += 2 ** k;
  return clock;
}

/** The clock burnt into a full-size JPEG, decoded to grey pixels by ffmpeg as frame-clock.ts reads a page's. */
async function burntClock(jpeg: Buffer): Promise<number> {
  const size = jpegSize(jpeg);
  if (!size) throw new Error('not a whole JPEG');
  const { out } = await ffmpeg(['-v', 'error', '-i', 'pipe:0', '-f', 'rawvideo', '-pix_fmt', 'gray', 'pipe:1'], jpeg);
  expect(out.length).toBe(size.width * size.height);
  return clockIn(out, 0, size.width, 0);
}

/** The wall clock (ms) nearest `near` whose low bits are `clock`. */
function unwrap(clock: number, near: number): number {
  let ahead = (((near - clock) % CLOCK_MODULO) + CLOCK_MODULO) % CLOCK_MODULO;
  if (ahead > CLOCK_MODULO / 2) ahead -= CLOCK_MODULO;
  return near - ahead;
}

/** Clock strips of H.264 pictures (a file, or Annex B on stdin), decoded to grey: one per picture. */
const STRIP_FILTER = `format=gray,crop=${STRIP_WIDTH}:${CLOCK_STRIP.size}:0:${CLOCK_STRIP.y}`;
const stripClocks = (out: Buffer): number[] =>
  Array.from({ length: Math.floor(out.length / (STRIP_WIDTH * CLOCK_STRIP.size)) }, (_, i) =>
    clockIn(out, i * STRIP_WIDTH * CLOCK_STRIP.size, STRIP_WIDTH, CLOCK_STRIP.y),
  );

/** A camera's footage files on the disk, with their start (from the name). */
function footageFiles(device: string): Array<{ path: string; startMs: number }> {
  const dir = path.join(disk, device);
  return readdirSync(dir).flatMap((day) =>
    readdirSync(path.join(dir, day)).flatMap((name) => {
      const m = /^main-(\d+)\.mp4$/.exec(name);
      return m ? [{ path: path.join(dir, day, name), startMs: Number(m[1]) }] : [];
    }),
  );
}

/** Every picture of a footage file, dated as the footage dates it (ffmpeg says each one's time and kind: showinfo). */
async function datedFrames(file: string, startMs: number): Promise<DatedFrame[]> {
  const { out, log } = await ffmpeg(
    ['-nostdin', '-i', file, '-an', '-vf', `${STRIP_FILTER},showinfo`, '-fps_mode', 'passthrough'].concat([
      '-f',
      'rawvideo',
      'pipe:1',
    ]),
    null,
  );
  const infos = [...log.matchAll(/pts_time:\s*(-?[\d.]+).*?iskey:\s*(\d)/g)];
  const clocks = stripClocks(out);
  expect(clocks.length, file).toBe(infos.length);
  const first = Number(infos[0]?.[1]);
  return infos.map((m, i) => ({
    datedMs: startMs + Math.round((Number(m[1]) - first) * 1000),
    clock: clocks[i]!,
    key: m[2] === '1',
  }));
}

/**
 * Plays a relay address as a viewer and notes when each keyframe's last packet arrives; stop() ends it
 * and reads each keyframe's clock (the keyframes, with the SDP's parameter sets, decoded by one
 * ffmpeg). The first keyframe is left out: it is the relay's cached one, sent at once whatever its age.
 */
async function viewKeyframes(url: string): Promise<{ stop(): Promise<ArrivedKeyframe[]> }> {
  const client = await TestRtspClient.open(Number(new URL(url).port));
  const described = await client.request('DESCRIBE', url, { Accept: 'application/sdp' });
  const video = mediaCodecs(parseSdp(described.body.toString()))[0]!;
  const { sps, pps } = parseSpropParameterSets(video.fmtp);
  const arrived: number[] = [];
  const annexB: Buffer[] = [];
  let now = 0;
  const depacketizer = new VideoDepacketizer({ codec: 'H264' }, (unit) => {
    if (!unit.keyframe) return;
    arrived.push(now);
    annexB.push(...[...sps, ...pps, ...unit.nalus].flatMap((n) => [START_CODE, n]));
  });
  const header = createRtpHeader();
  // After the client's own listener, which has just added the frames of this chunk.
  client.socket.on('data', () => {
    now = Date.now();
    for (const frame of client.frames.splice(0))
      if (frame.channel === 0 && readRtpHeaderInto(frame.payload, header)) depacketizer.push(frame.payload, header);
  });
  await client.play(url);
  return {
    stop: async () => {
      client.close();
      const { out } = await ffmpeg(
        ['-v', 'error', '-f', 'h264', '-i', 'pipe:0', '-vf', STRIP_FILTER, '-fps_mode', 'passthrough'].concat([
          '-f',
          'rawvideo',
          'pipe:1',
        ]),
        Buffer.concat(annexB),
      );
      const clocks = stripClocks(out);
      expect(clocks.length).toBe(arrived.length);
      return arrived.slice(1).map((arrivedMs, i) => ({ arrivedMs, clock: clocks[i + 1]! }));
    },
  };
}

describe.skipIf(unavailable !== null)('the picture of a moment of footage', () => {
  beforeAll(async () => {
    // The clock is burnt into the main picture only.
    rig = await startFootageRig({
      name: 'Clock',
      password: PASSWORD,
      clockStrip: true,
      camera: { continuous_profile: 'main' },
    });
    ({ t, disk, deviceId } = rig);
  }, 60_000);

  afterAll(async () => {
    await rig?.stop();
  });

  it('shows the camera picture of the keyframe at or before the moment, dated when it reached the gateway', async () => {
    const stream = await t.request(`/v1/devices/${deviceId}/stream?profile=main`, {
      headers: await t.auth('devices:read'),
    });
    expect(stream.status, stream.text).toBe(200);
    const viewer = await viewKeyframes((stream.json() as { stream_url: string }).stream_url);
    // Two files or more: moments in the first file, across the join and in the next.
    await expect
      .poll(
        async () => {
          const [s] = await spans();
          return s ? Date.parse(s.end) - Date.parse(s.start) : 0;
        },
        { timeout: 60_000, interval: 500 },
      )
      .toBeGreaterThan(16_000);
    const arrivals = await viewer.stop();
    const [span] = await spans();
    const start = Date.parse(span!.start);
    const headers = await t.auth('recordings:read');
    // Moments at spread phases of the group of pictures, once the viewer sees the stream.
    const moments = Array.from({ length: 8 }, (_, i) => start + 3000 + i * 1537);
    const asked: Asked[] = [];
    const ask = async (at: number) => {
      const res = await t.request(`/v1/devices/${deviceId}/footage/frame?at=${new Date(at).toISOString()}`, {
        headers,
      });
      expect(res.status, res.text).toBe(200);
      expect(res.headers['content-type']).toBe('image/jpeg');
      const shown = Date.parse(res.headers['x-picture-time'] as string);
      asked.push({ at, shown, clock: unwrap(await burntClock(res.body), at) });
    };
    for (const at of moments) await ask(at);
    // The moment a picture is dated at shows that picture.
    await ask(asked[3]!.shown);

    // Every picture of the files those moments fall in, as the footage dates it, with its clock.
    const last = Math.max(...moments);
    const files = footageFiles(deviceId).filter((f) => f.startMs <= last);
    const frames = (await Promise.all(files.map((f) => datedFrames(f.path, f.startMs)))).flat();
    const keyframes = frames.filter((f) => f.key).map((f) => f.datedMs);
    // When the footage says each keyframe the viewer saw was, against when it arrived.
    const sinceArrival = arrivals.flatMap((k) => {
      const f = frames.find((x) => x.key && x.clock === k.clock);
      return f ? [f.datedMs - k.arrivedMs] : [];
    });
    const dating = median(sinceArrival);
    // How far after its clock the footage dates a picture, over the footage (typical: the camera's delay).
    const lag = median(frames.map((f) => f.datedMs - unwrap(f.clock, f.datedMs)));
    const report = (a: Asked) =>
      `at ${new Date(a.at).toISOString()}: X-Picture-Time ${a.shown - a.at} ms and the picture's clock ${a.clock - a.at} ms from it; ` +
      `footage dated ${lag} ms after the pictures' clocks and ${dating} ms from their arrivals (medians)`;
    for (const a of asked) {
      // The picture is the keyframe the footage dates at X-Picture-Time: the same camera picture.
      const pictured = frames.find((f) => Math.abs(f.datedMs - a.shown) <= 1);
      expect(pictured, report(a)).toBeDefined();
      expect(pictured!.key, report(a)).toBe(true);
      expect(unwrap(pictured!.clock, a.at), report(a)).toBe(a.clock);
      // The keyframe at or before the moment: no later one before it, and less than a group of pictures back.
      expect(a.shown, report(a)).toBeLessThanOrEqual(a.at);
      expect(
        keyframes.filter((k) => k > a.shown && k <= a.at),
        report(a),
      ).toEqual([]);
      expect(a.at - a.shown, report(a)).toBeLessThan(GOP_MS + FRAME_MS);
      // The camera made it at or before the moment, within a group of pictures and its delay, a frame or
      // two from X-Picture-Time less that delay; allowed: how far this picture strays from its media time.
      const stray = Math.abs(a.shown - a.clock - lag);
      expect(a.clock, report(a)).toBeLessThanOrEqual(a.at + stray);
      expect(a.at - a.clock, report(a)).toBeLessThanOrEqual(GOP_MS + lag + 2 * FRAME_MS + stray);
    }
    // Dated when the pictures reached the gateway: a frame or two either way, over every keyframe seen.
    expect(sinceArrival.length, asked.map(report).join('\n')).toBeGreaterThanOrEqual(8);
    expect(Math.abs(dating), asked.map(report).join('\n')).toBeLessThanOrEqual(2 * FRAME_MS);
    expect(lag, asked.map(report).join('\n')).toBeGreaterThanOrEqual(0);
  }, 120_000);
});
