import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Segmenter } from '../../../src/media/recorder/segmenter.js';
import { SEGMENT_INDEX } from '../../../src/media/recorder/segments.js';
import { startFleet, type Fleet } from '../../../src/onvif/simulator/fleet.js';
import { EXTRA_MOUNTS, startSimulatedRtsp, type SimulatedRtsp } from '../../../src/onvif/simulator/rtsp.js';
import { firstOnlineDevice, startTestGateway, type TestGateway } from '../../support/gateway.js';

// The recorder's ffmpeg says nothing while it records: every line it writes to stderr is logged as
// a warning (a future ffmpeg may refuse what it warns about today). Tried through the started
// gateway's relay on the simulated camera, and directly on gst-rtsp-server's other codecs (H.265 with
// AAC, H.264 with G.711 and with AAC).

const USER = 'admin';
const PASSWORD = 'seg-secret';
const SEGMENTS = 4;

/** Warning and error lines of a pino logger, as parsed objects. */
function capturingLogger(): { logger: pino.Logger; warnings: Array<{ msg: string; stderr?: string }> } {
  const warnings: Array<{ msg: string; stderr?: string }> = [];
  const logger = pino(
    { level: 'warn' },
    { write: (line: string) => void warnings.push(JSON.parse(line) as { msg: string; stderr?: string }) },
  );
  return { logger, warnings };
}

async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100)))
    if (check()) return;
  throw new Error(`timed out waiting for ${what}`);
}

describe('the recorder ffmpeg through the gateway relay', () => {
  let fleet: Fleet;
  let t: TestGateway;
  const lines: string[] = [];
  beforeAll(async () => {
    fleet = await startFleet({
      count: 1,
      host: '127.0.0.1',
      basePort: 0,
      username: USER,
      password: PASSWORD,
      discovery: null,
      rtspPort: 0,
      logger: pino({ level: 'silent' }),
    });
    t = await startTestGateway(
      {
        cameras: [{ name: 'Porch', onvif_url: fleet.cameras[0]!.deviceServiceUrl, username: USER, password: PASSWORD }],
      },
      { logLines: lines },
    );
  });
  afterAll(async () => {
    await t?.stop();
    await fleet?.stop();
  });

  it('writes segments of the simulated camera with no ffmpeg warning', async () => {
    const deviceId = await firstOnlineDevice(t);
    // The RAM index lists each finished segment: one line each.
    const index = path.join(t.dataDir, 'segments', deviceId, SEGMENT_INDEX);
    const listed = () => (existsSync(index) ? readFileSync(index, 'utf8').split('\n').filter(Boolean).length : 0);
    await until(() => listed() >= SEGMENTS, `${SEGMENTS} segments`, 60_000);
    const said = lines
      .map((l) => JSON.parse(l) as { level: number; msg: string; stderr?: string })
      .filter((l) => l.msg === 'recorder ffmpeg says');
    expect(said).toEqual([]);
  });
});

describe('the recorder ffmpeg on gst-rtsp-server mounts', () => {
  let rtsp: SimulatedRtsp;
  const dirs: string[] = [];
  beforeAll(async () => {
    rtsp = await startSimulatedRtsp({
      cameras: 1,
      host: '127.0.0.1',
      port: 0,
      username: USER,
      password: PASSWORD,
      extraMounts: [...EXTRA_MOUNTS],
      logger: pino({ level: 'silent' }),
    });
  });
  afterAll(async () => {
    await rtsp?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it.each(['main', ...EXTRA_MOUNTS] as const)('writes segments of %s with no ffmpeg warning', async (mount) => {
    const dir = mkdtempSync('/dev/shm/eg-seg-warn-');
    dirs.push(dir);
    const { logger, warnings } = capturingLogger();
    const url = new URL(rtsp.url(0, mount));
    url.username = USER;
    url.password = PASSWORD;
    const segmenter = new Segmenter({
      deviceId: mount,
      ffmpegPath: 'ffmpeg',
      dir: path.join(dir, mount),
      inputUrl: () => url.href,
      logger,
    });
    try {
      await until(() => segmenter.ring.size >= SEGMENTS, `${SEGMENTS} segments of ${mount}`);
    } finally {
      await segmenter.stop();
    }
    expect(warnings.map((w) => w.stderr ?? w.msg)).toEqual([]);
  });
});
