import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHlsRig, type HlsRig } from '../../support/live-hls.js';
import { CHROMIUM_OFFER, SAFARI_OFFER } from './offers.js';
import { mLine, PT, startPeer, type RecordingPeer } from './recording-peer.js';

// The camera's codecs over WHEP from the started gateway (real HTTPS; simulated cameras adopted
// over ONVIF: "AAC" sends H.264 + AAC on main, "HEVC" H.265 + AAC on main and H.264 on sub), with
// the default webrtc settings (audio_transcode off):
// - H.265 is answered, passed through as it comes, to an offer that has H.265 (Safari's shape; a
//   real node-datachannel viewer gets the packets); an offer without it (Chromium's) gets a 400
//   that says why and names the sub profile, which then plays.
// - AAC is dropped: the audio section is rejected (port 0) and no audio packet arrives.

let rig: HlsRig;
const peers: RecordingPeer[] = [];
const POLL = { timeout: 60_000, interval: 100 };

beforeAll(async () => {
  rig = await startHlsRig({ webrtc: { bind_address: '127.0.0.1', connect_timeout_s: 3 }, rtsp: { idle_close_s: 1 } });
}, 120_000);
afterAll(async () => {
  await Promise.all(peers.map((p) => p.close()));
  await rig?.stop();
});

async function whepPath(deviceId: string, profile: 'main' | 'sub' = 'main'): Promise<string> {
  const res = await rig.t.request(`/v1/devices/${deviceId}/stream?protocol=webrtc&profile=${profile}`, {
    headers: await rig.t.auth('devices:read'),
  });
  expect(res.status, res.text).toBe(200);
  return new URL((res.json() as { stream_url: string }).stream_url).pathname;
}

const post = async (deviceId: string, offer: string, profile: 'main' | 'sub' = 'main') =>
  rig.t.request(await whepPath(deviceId, profile), {
    method: 'POST',
    headers: { 'content-type': 'application/sdp' },
    body: offer,
  });

async function peer(deviceId: string, video: 'H264' | 'H265', audio: Array<'OPUS' | 'PCMU'>): Promise<RecordingPeer> {
  const p = await startPeer(rig.t.request, () => whepPath(deviceId), { video, audio });
  peers.push(p);
  return p;
}

describe('H.265 over WebRTC', () => {
  it('answers an offer that has H.265 with H.265 on its payload type and the camera profile', async () => {
    const res = await post(rig.devices.HEVC, SAFARI_OFFER);
    expect(res.status, res.text).toBe(201);
    const video = mLine(res.text, 'video');
    expect(video).toMatch(/^m=video [1-9]\d* UDP\/TLS\/RTP\/SAVPF 96$/);
    expect(res.text).toContain('a=rtpmap:96 H265/90000');
    expect(res.text).toMatch(/^a=fmtp:96 level-id=\d+;profile-id=1;tier-flag=0;tx-mode=SRST$/m);
    // AAC is not a WebRTC codec and audio_transcode is off: the audio section is rejected.
    expect(mLine(res.text, 'audio')).toMatch(/^m=audio 0 /);
    await rig.t.request(String(res.headers.location), { method: 'DELETE' });
  });

  it("a real viewer offering H.265 gets the camera's H.265 packets", async () => {
    const p = await peer(rig.devices.HEVC, 'H265', ['OPUS']);
    expect(p.status, p.body).toBe(201);
    await expect.poll(() => p.count('video', PT.H265), POLL).toBeGreaterThan(30);
    expect([...p.packets.video.keys()]).toEqual([PT.H265]);
    expect(p.packets.audio.size).toBe(0);
    await p.close();
  }, 120_000);

  it('refuses an offer without H.265 with 400 saying why and naming the sub profile, which then plays', async () => {
    const res = await post(rig.devices.HEVC, CHROMIUM_OFFER);
    expect(res.status).toBe(400);
    const body = res.json() as { error: string; error_description: string };
    expect(body.error).toBe('unsupported_codec');
    expect(body.error_description).toContain("this camera profile sends H.265 and the browser's offer has no H.265");
    expect(body.error_description).toContain('ask for the sub profile (profile=sub)');
    expect(body.error_description).toContain('H265/90000 (video)');
    const sub = await post(rig.devices.HEVC, CHROMIUM_OFFER, 'sub');
    expect(sub.status, sub.text).toBe(201);
    expect(sub.text).toMatch(/^a=rtpmap:\d+ H264\/90000$/m);
    await rig.t.request(String(sub.headers.location), { method: 'DELETE' });
  });
});

describe('AAC with webrtc.audio_transcode off (the default)', () => {
  it('rejects the audio section of an offer with Opus: a real viewer gets video and no audio', async () => {
    const p = await peer(rig.devices.AAC, 'H264', ['OPUS', 'PCMU']);
    expect(p.status, p.body).toBe(201);
    expect(mLine(p.body, 'audio')).toMatch(/^m=audio 0 /);
    expect(p.body).not.toContain('opus/48000');
    await expect.poll(() => p.count('video', PT.H264), POLL).toBeGreaterThan(30);
    expect(p.packets.audio.size).toBe(0);
    expect(await rig.t.metrics()).not.toContain('edge_gateway_webrtc_audio_transcoders');
    await p.close();
  }, 120_000);
});
