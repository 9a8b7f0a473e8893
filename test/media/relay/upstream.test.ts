import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { h264StartsKeyframe } from '../../../src/media/h26x.js';
import { UpstreamSession } from '../../../src/media/relay/upstream.js';
import { UpstreamError } from '../../../src/media/relay/errors.js';
import { readRtpHeader } from '../../../src/media/rtp.js';
import { startSimulatedRtsp, type SimulatedRtsp } from '../../../src/onvif/simulator/rtsp.js';

// The relay's camera-side client against a real RTSP server (GStreamer's gst-rtsp-server with
// Digest authentication, fed H.264 by ffmpeg): handshake, packets, keyframes, refusal, close.

const logger = pino({ level: 'silent' });
let camera: SimulatedRtsp;

beforeAll(async () => {
  camera = await startSimulatedRtsp({
    cameras: 1,
    host: '127.0.0.1',
    port: 0,
    username: 'admin',
    password: 'open-sesame',
    logger,
  });
});
afterAll(() => camera?.stop());

describe('UpstreamSession', () => {
  it('opens an authenticated session over TCP and receives H.264 RTP with keyframes', async () => {
    let packets = 0;
    let keyframes = 0;
    let closedWith: UpstreamError | null = null;
    const up = await UpstreamSession.open({
      url: camera.url(0, 'main'),
      username: 'admin',
      password: 'open-sesame',
      logger,
      onPacket: (track, packet) => {
        expect(track).toBe(0);
        const h = readRtpHeader(packet);
        if (!h) return;
        packets++;
        if (h264StartsKeyframe(packet, h.payloadOffset, h.payloadLength)) keyframes++;
      },
      onClose: (err) => (closedWith = err),
    });
    expect(up.tracks).toHaveLength(1);
    expect(up.tracks[0]?.codec).toMatchObject({ media: 'video', encoding: 'H264', clockRate: 90000 });
    expect(up.tracks[0]?.control).not.toContain('open-sesame');
    await expect.poll(() => keyframes, { timeout: 10_000 }).toBeGreaterThanOrEqual(2); // at least SPS and IDR start of one keyframe
    expect(packets).toBeGreaterThan(keyframes);
    up.close();
    expect(closedWith).toBeInstanceOf(UpstreamError);
    expect((closedWith as UpstreamError | null)?.kind).toBe('closed');
  });

  it('reports refused credentials and unreachable cameras as such', async () => {
    const open = (url: string, password: string) =>
      UpstreamSession.open({
        url,
        username: 'admin',
        password,
        logger,
        timeoutMs: 3000,
        onPacket: () => undefined,
        onClose: () => undefined,
      });
    await expect(open(camera.url(0, 'main'), 'wrong')).rejects.toMatchObject({ kind: 'unauthorized' });
    await expect(open('rtsp://127.0.0.1:9/cam0/main', 'x')).rejects.toMatchObject({ kind: 'unreachable' });
    await expect(open(camera.url(0, 'main').replace('/cam0/', '/nope/'), 'open-sesame')).rejects.toMatchObject({
      kind: 'refused',
    });
  });
});
