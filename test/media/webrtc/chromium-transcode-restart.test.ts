import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, newContext, servePage } from '../../support/browser.js';
import { startHlsRig, type HlsRig } from '../../support/live-hls.js';
import { transcoderPids } from './transcoder-pids.js';
import { pageStats as stats, whepPlay } from './whep-page.js';

// A browser across a restart of the AAC → Opus transcoder (webrtc.audio_transcode): the started
// gateway and its simulated H.264 + AAC camera, chromium playing the WebRTC stream_url. The
// transcoder's ffmpeg is killed while chromium plays: its video must keep decoding all along, and
// Opus must come again once the transcoder has been restarted. (The node-datachannel viewer of
// audio-transcode.test.ts, in this process, sometimes stopped receiving after such a restart; this
// is what a person's browser sees.)

let rig: HlsRig;
let browser: Browser;
let context: BrowserContext;
let pageServer: Awaited<ReturnType<typeof servePage>>;

beforeAll(async () => {
  rig = await startHlsRig({ webrtc: { bind_address: '127.0.0.1', audio_transcode: true }, rtsp: { idle_close_s: 1 } });
  browser = await launchChromium();
  context = await newContext(browser);
  pageServer = await servePage('<!doctype html><title>live</title><video id="v" muted autoplay playsinline></video>');
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await pageServer?.close();
  await rig?.stop();
});

const POLL = { timeout: 60_000, interval: 250 };

describe('chromium across a restart of the audio transcoder', () => {
  it('keeps decoding video while the transcoder dies and is restarted, and gets Opus again after', async () => {
    const res = await rig.t.request(`/v1/devices/${rig.devices.AAC}/stream?protocol=webrtc`, {
      headers: await rig.t.auth('devices:read'),
    });
    expect(res.status, res.text).toBe(200);
    const { stream_url } = res.json() as { stream_url: string };
    const page = await context.newPage();
    await page.goto(pageServer.origin);
    await page.evaluate(whepPlay(stream_url));
    await expect.poll(async () => (await stats(page)).audioPackets, POLL).toBeGreaterThan(20);
    expect((await stats(page)).audioCodec).toBe('audio/opus/48000');
    await expect.poll(async () => (await stats(page)).frames, POLL).toBeGreaterThan(0);

    const [pid] = transcoderPids();
    expect(pid).toBeDefined();
    process.kill(pid as number, 'SIGKILL');
    const atKill = await stats(page);
    // Video goes on while no transcoder runs (the restart waits at least 0.5 s).
    await expect.poll(async () => (await stats(page)).frames, POLL).toBeGreaterThan(atKill.frames + 15);
    await expect.poll(() => transcoderPids().filter((other) => other !== pid), POLL).toHaveLength(1);
    const atRestart = await stats(page);
    // The new ffmpeg's Opus reaches the browser, and the video still decodes.
    await expect.poll(async () => (await stats(page)).audioPackets, POLL).toBeGreaterThan(atRestart.audioPackets + 50);
    await expect.poll(async () => (await stats(page)).frames, POLL).toBeGreaterThan(atRestart.frames + 30);
    await page.close();
  }, 180_000);
});
