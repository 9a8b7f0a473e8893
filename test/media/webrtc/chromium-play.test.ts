import { pino } from 'pino';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../../../src/onvif/simulator/fleet.js';
import { launchChromium, newContext, servePage } from '../../support/browser.js';
import { firstOnlineDevice, startTestGateway, type TestGateway } from '../../support/gateway.js';
import { whepPlay } from './whep-page.js';

// Debian's chromium plays the simulated camera's live stream over WebRTC from the started gateway:
// a web app on another origin (a page served here over loopback HTTP) asks for nothing but the
// stream_url of protocol=webrtc, does what a WHEP player does (RTCPeerConnection recvonly, POST
// of the offer, the answer), and its decoded frames keep increasing; its DELETE (a CORS request)
// ends the session. The gateway's certificate is self-signed: the context ignores HTTPS errors.

let fleet: Fleet;
let t: TestGateway;
let deviceId = '';
let browser: Browser;
let context: BrowserContext;
let pageServer: Awaited<ReturnType<typeof servePage>>;

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
    webrtc: { bind_address: '127.0.0.1' },
  });
  deviceId = await firstOnlineDevice(t);
  browser = await launchChromium();
  context = await newContext(browser);
  pageServer = await servePage('<!doctype html><title>live</title><video id="v" muted autoplay playsinline></video>');
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await pageServer?.close();
  await t?.stop();
  await fleet?.stop();
});

const FRAMES = `(async () => {
  let frames = 0;
  (await window.pc.getStats()).forEach((r) => { if (r.type === 'inbound-rtp' && r.kind === 'video') frames = r.framesDecoded || 0; });
  return frames;
})()`;

async function framesDecoded(page: Page): Promise<number> {
  const n: unknown = await page.evaluate(FRAMES);
  if (typeof n !== 'number') throw new Error('the page returned no frame count');
  return n;
}

async function metric(series: string): Promise<number> {
  const text = await t.metrics();
  return Number(new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
}

describe('chromium plays the WebRTC stream_url (WHEP) of the started gateway', () => {
  it('decodes frames that keep coming for several seconds; DELETE on the Location ends the session', async () => {
    const res = await t.request(`/v1/devices/${deviceId}/stream?protocol=webrtc`, {
      headers: await t.auth('devices:read'),
    });
    expect(res.status).toBe(200);
    const { stream_url } = res.json() as { stream_url: string };
    const page = await context.newPage();
    page.on('pageerror', (err) => console.error('[page]', err.message));
    await page.goto(pageServer.origin);

    const location: unknown = await page.evaluate(whepPlay(stream_url));
    expect(typeof location).toBe('string');
    expect(await metric('edge_gateway_webrtc_sessions{state="open"}')).toBe(1);

    await expect.poll(() => framesDecoded(page), { timeout: 30_000, interval: 250 }).toBeGreaterThan(0);
    expect(await metric('edge_gateway_webrtc_sessions{state="connected"}')).toBe(1);
    // Still playing: more frames at every look over several seconds.
    let last = await framesDecoded(page);
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, 1500));
      const now = await framesDecoded(page);
      expect(now, `look ${i + 1}`).toBeGreaterThan(last);
      last = now;
    }
    // The camera still has one session: the relay's.
    expect(await metric('edge_gateway_relay_camera_sessions')).toBe(1);

    const status: unknown = await page.evaluate(
      `fetch(${JSON.stringify(location)}, { method: 'DELETE' }).then((r) => r.status)`,
    );
    expect(status).toBe(200);
    expect(await metric('edge_gateway_webrtc_sessions{state="open"}')).toBe(0);
    expect(await metric('edge_gateway_webrtc_sessions_ended_total{reason="deleted"}')).toBe(1);
    await page.close();
  }, 90_000);
});
