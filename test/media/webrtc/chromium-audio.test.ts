import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toApiError } from '../../../src/api/errors.js';
import { liveRoutes } from '../../../src/api/routes/live.js';
import { RelayStreams } from '../../../src/media/relay/streams.js';
import { TicketSigner } from '../../../src/media/ticket.js';
import type { WebRtcSessions } from '../../../src/media/webrtc/sessions.js';
import { loopbackWebRtcSessions } from './loopback-sessions.js';
import { startSimulatedRtsp, type SimulatedRtsp } from '../../../src/onvif/simulator/rtsp.js';
import { launchChromium } from '../../support/browser.js';
import { CHROMIUM_OFFER } from './offers.js';
import { pageStats as stats, whepPlay } from './whep-page.js';

// The camera's audio in a real browser: the simulated camera's extra mounts (gst-rtsp-server,
// Digest auth) behind the relay's RelayStreams and the WHEP routes (plain HTTP on loopback here,
// no daemon: the daemon's cameras only have main and sub). H.264 + G.711 µ-law: chromium decodes
// the video and receives PCMU as the camera sent it. H.265 + AAC: chromium offers no H.265, so the
// POST is refused with 400 naming the camera's codecs.

const logger = pino({ level: 'silent' });
const USER = 'admin';
const PASSWORD = 'cam-secret-audio';
let camera: SimulatedRtsp;
let streams: RelayStreams;
let webrtc: WebRtcSessions;
let app: FastifyInstance;
let browser: Browser;
let base = '';
const tickets = new TicketSigner(randomBytes(32));

beforeAll(async () => {
  camera = await startSimulatedRtsp({
    cameras: 1,
    host: '127.0.0.1',
    port: 0,
    username: USER,
    password: PASSWORD,
    extraMounts: ['h264pcmu', 'h265aac'],
    logger,
  });
  streams = new RelayStreams({
    locate: (deviceId) =>
      deviceId === 'h264pcmu' || deviceId === 'h265aac'
        ? { url: camera.url(0, deviceId), username: USER, password: PASSWORD }
        : null,
    logger,
    idleCloseS: 1,
  });
  webrtc = loopbackWebRtcSessions(streams, logger);
  app = Fastify();
  // The API's one mapping of errors to answers (src/api/errors.ts), as buildApiServer installs it.
  app.setErrorHandler(async (err, _req, reply) => {
    const api = toApiError(err);
    if (!api) return reply.code(500).send({ error: 'server_error' });
    return reply
      .code(api.statusCode)
      .headers(api.headers)
      .send({ error: api.code, error_description: api.description });
  });
  app.get('/', async (_req, reply) => reply.type('text/html').send('<!doctype html><title>audio</title>'));
  await app.register(liveRoutes, { tickets, webrtc, maxSessionS: 600, prefix: '/live' });
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  webrtc?.close();
  await app?.close();
  streams?.close();
  await camera?.stop();
});

const whep = (deviceId: string) =>
  `${base}/live/${tickets.issue({ deviceId, profile: 'main', expiresAt: Date.now() + 60_000 })}/whep`;

describe('camera audio through WebRTC in chromium', () => {
  it('H.264 + G.711 µ-law: video decodes and PCMU/8000 packets keep coming', async () => {
    const page = await browser.newPage();
    await page.goto(base);
    const location: unknown = await page.evaluate(whepPlay(whep('h264pcmu')));
    expect(String(location)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/live\/.+\/whep\/[A-Za-z0-9_-]{22}$/);
    await expect.poll(async () => (await stats(page)).frames, { timeout: 30_000, interval: 250 }).toBeGreaterThan(0);
    await expect
      .poll(async () => (await stats(page)).audioPackets, { timeout: 10_000, interval: 250 })
      .toBeGreaterThan(0);
    const first = await stats(page);
    expect(first.audioCodec).toBe('audio/PCMU/8000');
    await new Promise((r) => setTimeout(r, 2000));
    const later = await stats(page);
    expect(later.frames).toBeGreaterThan(first.frames);
    expect(later.audioPackets).toBeGreaterThan(first.audioPackets);
    expect(webrtc.stats().connected).toBe(1);
    await page.close();
  }, 90_000);

  it("H.265 + AAC to a browser offering no H.265: 400 naming the camera's codecs, nothing kept", async () => {
    const res = await fetch(whep('h265aac'), {
      method: 'POST',
      headers: { 'content-type': 'application/sdp' },
      body: CHROMIUM_OFFER,
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error).toBe('unsupported_codec');
    expect(body.error_description).toContain('H265/90000 (video)');
    expect(body.error_description).toContain('MPEG4-GENERIC/16000 (audio)');
    expect(webrtc.stats().refused.no_common_codec).toBe(1);
  }, 60_000);
});
