import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSdp } from '../../../src/media/sdp.js';
import { TicketSigner } from '../../../src/media/ticket.js';
import { startFleet, type Fleet } from '../../../src/onvif/simulator/fleet.js';
import { SecretBox } from '../../../src/platform/secret-box.js';
import { firstOnlineDevice, startTestGateway, type TestGateway } from '../../support/gateway.js';
import { CHROMIUM_OFFER } from './offers.js';

// The WHEP endpoint of the started gateway (real HTTPS, the simulated camera through the relay):
// the address, CORS, a session's start and end, and every bad input with its answer.
// Offers are Chromium's stored one: its ICE credentials belong to no live peer, so these sessions
// never connect and are dropped after webrtc.connect_timeout_s (which the flood test relies on).
// A real browser playing is test/media/webrtc/chromium-play.test.ts.

let fleet: Fleet;
let t: TestGateway;
let deviceId = '';
const CONNECT_TIMEOUT_S = 2;
const PER_ADDRESS = 3;

beforeAll(async () => {
  fleet = await startFleet({
    count: 1,
    host: '127.0.0.1',
    basePort: 0,
    username: 'admin',
    password: 'cam-secret-7',
    discovery: null,
    rtspPort: 0,
    logger: pino({ level: 'silent' }),
  });
  t = await startTestGateway({
    cameras: [
      { name: 'Porch', onvif_url: fleet.cameras[0]!.deviceServiceUrl, username: 'admin', password: 'cam-secret-7' },
    ],
    rtsp: { idle_close_s: 1 },
    webrtc: { bind_address: '127.0.0.1', connect_timeout_s: CONNECT_TIMEOUT_S, max_sessions_per_address: PER_ADDRESS },
  });
  deviceId = await firstOnlineDevice(t);
});
afterAll(async () => {
  await t?.stop();
  await fleet?.stop();
});

async function address(
  protocol: string,
  profile = 'main',
): Promise<{ stream_url: string; expires_at: string; protocol: string }> {
  const res = await t.request(`/v1/devices/${deviceId}/stream?protocol=${protocol}&profile=${profile}`, {
    headers: await t.auth('devices:read'),
  });
  expect(res.status).toBe(200);
  return res.json() as { stream_url: string; expires_at: string; protocol: string };
}

/** The path of a WHEP URL on the API (its host is the one the request reached: this loopback). */
async function whepPath(profile = 'main'): Promise<string> {
  return new URL((await address('webrtc', profile)).stream_url).pathname;
}

const postOffer = (
  path: string,
  body: string | Buffer,
  contentType = 'application/sdp',
  extra: Record<string, string> = {},
) => t.request(path, { method: 'POST', headers: { 'content-type': contentType, ...extra }, body });

async function metric(series: string): Promise<number> {
  const text = await t.metrics();
  return Number(new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
}

const OPEN = 'edge_gateway_webrtc_sessions{state="open"}';

describe('GET /v1/devices/{id}/stream?protocol=…', () => {
  it('gives rtsp:// on the relay, and WHEP / LL-HLS https:// addresses on the API port at the host the request reached', async () => {
    const api = new URL(t.gw.apiUrl);
    const rtsp = await address('rtsp');
    expect(rtsp.protocol).toBe('rtsp');
    expect(rtsp.stream_url).toMatch(/^rtsp:\/\/127\.0\.0\.1:\d+\/live\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    const webrtc = await address('webrtc', 'sub');
    expect(webrtc.protocol).toBe('webrtc');
    expect(webrtc.stream_url).toMatch(
      new RegExp(`^https://127\\.0\\.0\\.1:${api.port}/live/[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{22}/whep$`),
    );
    const hls = await address('hls');
    expect(hls.protocol).toBe('hls');
    expect(hls.stream_url).toMatch(
      new RegExp(`^https://127\\.0\\.0\\.1:${api.port}/live/[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{22}/index\\.m3u8$`),
    );
    expect(Date.parse(webrtc.expires_at)).toBeGreaterThan(Date.now());
    // No parameter: today's rtsp address.
    const plain = (
      await t.request(`/v1/devices/${deviceId}/stream`, { headers: await t.auth('devices:read') })
    ).json() as { stream_url: string; protocol: string };
    expect(plain.protocol).toBe('rtsp');
    expect(plain.stream_url.startsWith('rtsp://')).toBe(true);
  });
});

describe('WHEP (RFC 9725) on /live/{ticket}/whep', () => {
  it('answers CORS preflights of POST, PATCH and DELETE and exposes Location', async () => {
    const path = await whepPath();
    for (const method of ['POST', 'PATCH', 'DELETE']) {
      const res = await t.request(path, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://dashboard.lan:8123',
          'access-control-request-method': method,
          'access-control-request-headers': 'content-type',
        },
      });
      expect(res.status, method).toBe(204);
      expect(String(res.headers['access-control-allow-methods']).split(/,\s*/)).toEqual(
        expect.arrayContaining([method]),
      );
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(String(res.headers['access-control-allow-headers']).toLowerCase()).toContain('content-type');
    }
    // CORS stays on /live: the /v1 API gets no CORS headers.
    const v1 = await t.request('/v1/devices', {
      method: 'OPTIONS',
      headers: { origin: 'https://dashboard.lan:8123', 'access-control-request-method': 'GET' },
    });
    expect(v1.headers['access-control-allow-origin']).toBeUndefined();
  });

  it("POST with the offer → 201, Location, an SDP answer sending the camera's H.264; PATCH → 405; DELETE ends it", async () => {
    const path = await whepPath();
    const res = await postOffer(path, CHROMIUM_OFFER, 'application/sdp', { origin: 'https://dashboard.lan:8123' });
    expect(res.status, res.text).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/sdp/);
    expect(res.headers['access-control-expose-headers']).toMatch(/Location/);
    const location = String(res.headers.location);
    expect(location).toMatch(new RegExp(`^${path.replace(/\./g, '\\.')}/[A-Za-z0-9_-]{22}$`));

    const answer = parseSdp(res.text);
    const [video, audio] = answer.media;
    expect(video?.media).toBe('video');
    const lines = res.text.split('\r\n');
    expect(lines).toContain('a=sendonly');
    expect(lines.some((l) => /^a=rtpmap:\d+ H264\/90000$/.test(l))).toBe(true);
    expect(lines.some((l) => /^a=fmtp:\d+ .*packetization-mode=1/.test(l))).toBe(true);
    expect(lines.some((l) => /^a=candidate:\S+ 1 UDP \d+ 127\.0\.0\.1 \d+ typ host$/i.test(l))).toBe(true);
    expect(lines).toContain('a=end-of-candidates');
    expect(lines).toContain('a=setup:active');
    // The camera's main profile has no audio: the audio section is rejected (port 0).
    expect(audio?.media).toBe('audio');
    expect(res.text).toMatch(/^m=audio 0 /m);
    expect(await metric(OPEN)).toBe(1);

    const patch = await t.request(location, {
      method: 'PATCH',
      headers: { 'content-type': 'application/trickle-ice-sdpfrag' },
      body: 'a=end-of-candidates\r\n',
    });
    expect(patch.status).toBe(405);
    expect(patch.headers.allow).toMatch(/DELETE/);

    expect((await t.request(location, { method: 'DELETE' })).status).toBe(200);
    expect(await metric(OPEN)).toBe(0);
    expect(await metric('edge_gateway_webrtc_sessions_ended_total{reason="deleted"}')).toBeGreaterThanOrEqual(1);
    expect((await t.request(location, { method: 'DELETE' })).status).toBe(404);
  });

  it('a session nobody connects to is dropped after webrtc.connect_timeout_s', async () => {
    const res = await postOffer(await whepPath(), CHROMIUM_OFFER);
    expect(res.status).toBe(201);
    expect(await metric(OPEN)).toBe(1);
    await expect.poll(() => metric(OPEN), { timeout: (CONNECT_TIMEOUT_S + 10) * 1000 }).toBe(0);
    expect(await metric('edge_gateway_webrtc_sessions_ended_total{reason="ice_timeout"}')).toBeGreaterThanOrEqual(1);
    expect((await t.request(String(res.headers.location), { method: 'DELETE' })).status).toBe(404);
  });
});

describe('WHEP bad input', () => {
  it('a malformed offer → 400 naming what is wrong; nothing is started', async () => {
    const path = await whepPath();
    for (const body of [
      'hello',
      'v=0\r\n',
      CHROMIUM_OFFER.replace(/a=ice-ufrag:\S+/g, 'a=ice-ufrag:x'),
      CHROMIUM_OFFER.replace(/^m=.*$/gm, 'm=video'),
    ]) {
      const res = await postOffer(path, body);
      expect(res.status, body.slice(0, 40)).toBe(400);
      const err = res.json() as { error: string; error_description: string };
      expect(err.error).toBe('invalid_offer');
      expect(err.error_description).toMatch(/^the SDP offer cannot be used \(\w+\): ./);
    }
    expect(await metric(OPEN)).toBe(0);
  });

  it('an offer with no common video codec → 400 naming the codecs the camera sends', async () => {
    const vp8Only = CHROMIUM_OFFER.replace(/H264\/90000/g, 'VP8/90000');
    const res = await postOffer(await whepPath(), vp8Only);
    expect(res.status).toBe(400);
    const err = res.json() as { error: string; error_description: string };
    expect(err.error).toBe('unsupported_codec');
    expect(err.error_description).toContain('H264/90000 (video)');
    expect(await metric('edge_gateway_webrtc_sessions_refused_total{reason="no_common_codec"}')).toBeGreaterThanOrEqual(
      1,
    );
  });

  it('a huge body → 413; a body that is not application/sdp → 415', async () => {
    const path = await whepPath();
    const huge = await postOffer(path, Buffer.alloc(200_000, 'a'));
    expect(huge.status).toBe(413);
    expect((huge.json() as { error: string }).error).toBe('payload_too_large');
    const json = await postOffer(path, JSON.stringify({ sdp: CHROMIUM_OFFER }), 'application/json');
    expect(json.status).toBe(415);
    const none = await t.request(path, { method: 'POST' });
    expect(none.status).toBe(415);
    expect(await metric(OPEN)).toBe(0);
  });

  it('unknown session paths → 404', async () => {
    const path = await whepPath();
    expect((await t.request(`${path}/AAAAAAAAAAAAAAAAAAAAAA`, { method: 'DELETE' })).status).toBe(404);
    expect(
      (
        await t.request(`${path}/AAAAAAAAAAAAAAAAAAAAAA`, {
          method: 'PATCH',
          body: 'x',
          headers: { 'content-type': 'application/trickle-ice-sdpfrag' },
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await t.request('/live/nothing/here', {
          method: 'POST',
          body: CHROMIUM_OFFER,
          headers: { 'content-type': 'application/sdp' },
        })
      ).status,
    ).toBe(404);
  });

  it('expired ticket → 401; tampered, foreign-key or malformed ticket → the 404 of an unknown path', async () => {
    const path = await whepPath();
    const signer = TicketSigner.openInDir(t.dataDir, SecretBox.openInDir(t.dataDir));
    const expired = signer.issue({ deviceId, profile: 'main', expiresAt: Date.now() - 1000 });
    const res = await postOffer(`/live/${expired}/whep`, CHROMIUM_OFFER);
    expect(res.status).toBe(401);
    expect((res.json() as { error: string }).error).toBe('expired_ticket');

    const ticket = path.split('/')[2] ?? '';
    const flipped = ticket.slice(0, -3) + (ticket.at(-3) === 'A' ? 'B' : 'A') + ticket.slice(-2);
    const foreign = new TicketSigner(Buffer.alloc(32, 7)).issue({
      deviceId,
      profile: 'main',
      expiresAt: Date.now() + 60_000,
    });
    const recorder = signer.issue({ deviceId, profile: 'main', expiresAt: Date.now() + 60_000, recorder: true });
    const otherDevice = signer.issue({ deviceId: 'no-such-device', profile: 'main', expiresAt: Date.now() + 60_000 });
    const unknownPath = await postOffer('/live/AAAA.AAAAAAAAAAAAAAAAAAAAAA/whep', CHROMIUM_OFFER);
    expect(unknownPath.status).toBe(404);
    const shape = (text: string, tk: string) => text.replace(tk, '<ticket>');
    for (const bad of [flipped, foreign, recorder, 'not-a-ticket']) {
      const r = await postOffer(`/live/${bad}/whep`, CHROMIUM_OFFER);
      expect(r.status, bad).toBe(404);
      expect(shape(r.text, bad)).toBe(shape(unknownPath.text, 'AAAA.AAAAAAAAAAAAAAAAAAAAAA'));
    }
    // A valid ticket of a device that is gone: the camera stream cannot be had (503), nothing kept.
    const gone = await postOffer(`/live/${otherDevice}/whep`, CHROMIUM_OFFER);
    expect(gone.status).toBe(503);
    expect(await metric(OPEN)).toBe(0);
  });

  it('a flood of POSTs from one address: webrtc.max_sessions_per_address sessions, the rest 429; all gone after the connect timeout', async () => {
    await expect.poll(() => metric(OPEN), { timeout: (CONNECT_TIMEOUT_S + 10) * 1000 }).toBe(0);
    const timedOut = await metric('edge_gateway_webrtc_sessions_ended_total{reason="ice_timeout"}');
    const readersBefore = await metric('edge_gateway_relay_readers');
    const path = await whepPath();
    const answers = await Promise.all(Array.from({ length: PER_ADDRESS + 5 }, () => postOffer(path, CHROMIUM_OFFER)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(PER_ADDRESS);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
    const refused = answers.find((a) => a.status === 429);
    expect(refused?.headers['retry-after']).toBeDefined();
    expect(await metric(OPEN)).toBe(PER_ADDRESS);
    expect(await metric('edge_gateway_relay_readers')).toBe(readersBefore + PER_ADDRESS);
    expect(
      await metric('edge_gateway_webrtc_sessions_refused_total{reason="per_address_limit"}'),
    ).toBeGreaterThanOrEqual(5);
    await expect.poll(() => metric(OPEN), { timeout: (CONNECT_TIMEOUT_S + 10) * 1000 }).toBe(0);
    expect(await metric('edge_gateway_webrtc_sessions_ended_total{reason="ice_timeout"}')).toBe(timedOut + PER_ADDRESS);
    // Every session left the relay's fan-out (the recorder, if it reads the camera, is the reader left).
    await expect.poll(() => metric('edge_gateway_relay_readers'), { timeout: 10_000 }).toBe(readersBefore);
  });
});
