import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHlsRig, type HlsRig } from '../../support/live-hls.js';
import { mLine, PT, startPeer, type RecordingPeer } from './recording-peer.js';
import { transcoderPids } from './transcoder-pids.js';

// webrtc.audio_transcode on, the started gateway (real HTTPS) and its simulated cameras adopted
// over ONVIF: "AAC" sends H.264 + AAC, "HEVC" H.265 + AAC. Real WebRTC viewers (node-datachannel)
// offering Opus get Opus RTP from one ffmpeg per camera profile, shared, restarted when it dies
// (the video going on meanwhile), stopped when the last viewer leaves; a second camera's viewers
// beyond webrtc.max_audio_transcoders get video only.

let rig: HlsRig;
const peers: RecordingPeer[] = [];

beforeAll(async () => {
  rig = await startHlsRig({
    webrtc: { bind_address: '127.0.0.1', audio_transcode: true, max_audio_transcoders: 1 },
    rtsp: { idle_close_s: 1 },
  });
}, 120_000);
afterEach((ctx) => {
  // Where each viewer's connection stood, when a test fails.
  if (ctx.task.result?.state === 'fail')
    for (const p of peers)
      console.error(
        p.location,
        `video ${p.count('video', PT.H264) + p.count('video', PT.H265)}, audio ${p.count('audio', PT.OPUS)}`,
        p.states(),
      );
});
afterAll(async () => {
  await Promise.all(peers.map((p) => p.close()));
  await rig?.stop();
});

async function whepPath(deviceId: string): Promise<string> {
  const res = await rig.t.request(`/v1/devices/${deviceId}/stream?protocol=webrtc`, {
    headers: await rig.t.auth('devices:read'),
  });
  expect(res.status, res.text).toBe(200);
  return new URL((res.json() as { stream_url: string }).stream_url).pathname;
}

async function peer(deviceId: string, video: 'H264' | 'H265', audio: Array<'OPUS' | 'PCMU'>): Promise<RecordingPeer> {
  const p = await startPeer(rig.t.request, () => whepPath(deviceId), { video, audio });
  peers.push(p);
  expect(p.status, p.body).toBe(201);
  return p;
}

async function metric(series: string): Promise<number> {
  const text = await rig.t.metrics();
  return Number(new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
}

// Generous: the simulated camera and ffmpeg share 2 loaded cores with other work.
const POLL = { timeout: 60_000, interval: 100 };

describe('webrtc.audio_transcode: true', () => {
  it('sends Opus to viewers that offer it, from one ffmpeg per camera profile, stopped with the last viewer', async () => {
    const first = await peer(rig.devices.AAC, 'H264', ['OPUS', 'PCMU']);
    expect(mLine(first.body, 'audio')).toMatch(new RegExp(`^m=audio [1-9]\\d* UDP/TLS/RTP/SAVPF ${PT.OPUS}$`));
    expect(first.body).toContain(`a=rtpmap:${PT.OPUS} opus/48000/2`);
    // Opus packets arrive and keep arriving, with the offered payload type; the camera's AAC never does.
    await expect.poll(() => first.count('audio', PT.OPUS), POLL).toBeGreaterThan(10);
    const seen = first.count('audio', PT.OPUS);
    await expect.poll(() => first.count('audio', PT.OPUS), POLL).toBeGreaterThan(seen + 25);
    expect([...first.packets.audio.keys()]).toEqual([PT.OPUS]);
    // Opus indeed (TOC config 31: CELT, full band, 20 ms, as ffmpeg is told), not the camera's AAC
    // relabelled (its RFC 3640 payload starts with the AU-headers length, 0x00).
    expect(new Set([...first.audioFirstBytes].map((b) => b >> 3))).toEqual(new Set([31]));
    expect(first.count('video', PT.H264)).toBeGreaterThan(0);

    // A second viewer of the same camera profile shares the ffmpeg.
    const second = await peer(rig.devices.AAC, 'H264', ['OPUS']);
    await expect.poll(() => second.count('audio', PT.OPUS), POLL).toBeGreaterThan(10);
    expect(await metric('edge_gateway_webrtc_audio_transcoders')).toBe(1);
    expect(await metric('edge_gateway_webrtc_audio_transcoder_listeners')).toBe(2);
    expect(transcoderPids()).toHaveLength(1);
    // The cameras keep one session per profile (two cameras, main only): the transcoder is one
    // more RTSP session of the relay, not of the camera.
    expect(await metric('edge_gateway_relay_camera_sessions')).toBeLessThanOrEqual(2);
    const relaySessions = await metric('edge_gateway_relay_sessions{transport="tcp"}');

    // Gone with the last viewer.
    await first.close();
    expect(await metric('edge_gateway_webrtc_audio_transcoders')).toBe(1);
    await second.close();
    expect(await metric('edge_gateway_webrtc_audio_transcoders')).toBe(0);
    await expect.poll(() => transcoderPids(), POLL).toEqual([]);
    await expect.poll(() => metric('edge_gateway_relay_sessions{transport="tcp"}'), POLL).toBe(relaySessions - 1);
  }, 300_000);

  it('answers no audio to an offer without Opus (AAC cannot pass as it is)', async () => {
    const p = await peer(rig.devices.AAC, 'H264', ['PCMU']);
    expect(mLine(p.body, 'audio')).toMatch(/^m=audio 0 /);
    await expect.poll(() => p.count('video', PT.H264), POLL).toBeGreaterThan(20);
    expect(p.packets.audio.size).toBe(0);
    expect(await metric('edge_gateway_webrtc_audio_transcoders')).toBe(0);
    await p.close();
  }, 150_000);

  it('gives another camera video only while webrtc.max_audio_transcoders (1) run, counted', async () => {
    const aac = await peer(rig.devices.AAC, 'H264', ['OPUS']);
    await expect.poll(() => aac.count('audio', PT.OPUS), POLL).toBeGreaterThan(0);
    const refused = await metric('edge_gateway_webrtc_audio_transcoder_refused_total');
    const hevc = await peer(rig.devices.HEVC, 'H265', ['OPUS']);
    expect(mLine(hevc.body, 'audio')).toMatch(/^m=audio 0 /);
    // One refusal per offer answered (a second when the test peer had to be made again).
    expect(await metric('edge_gateway_webrtc_audio_transcoder_refused_total')).toBe(refused + hevc.attempts);
    await expect.poll(() => hevc.count('video', PT.H265), POLL).toBeGreaterThan(20);
    expect(hevc.packets.audio.size).toBe(0);
    expect(await metric('edge_gateway_webrtc_audio_transcoders')).toBe(1);
    await hevc.close();
    await aac.close();
    await expect.poll(() => transcoderPids(), POLL).toEqual([]);
  }, 150_000);

  // The viewer's side too: recording-peer.ts keeps its tracks, since node-datachannel closes a track
  // whose object is garbage collected and the viewer would stop receiving (docs/webrtc.md).
  it('restarts a dying ffmpeg (counted) and its Opus comes again to the session', async () => {
    const p = await peer(rig.devices.AAC, 'H264', ['OPUS']);
    await expect.poll(() => p.count('audio', PT.OPUS), POLL).toBeGreaterThan(10);
    // One ffmpeg, this session's: a stopped one may linger a moment after its last viewer left.
    await expect.poll(() => transcoderPids(), POLL).toHaveLength(1);
    const [pid] = transcoderPids();
    const restarts = await metric('edge_gateway_webrtc_audio_transcoder_restarts_total');
    process.kill(pid as number, 'SIGKILL');
    await expect.poll(() => metric('edge_gateway_webrtc_audio_transcoder_restarts_total'), POLL).toBe(restarts + 1);
    const packetsAtRestart = await metric('edge_gateway_webrtc_audio_transcoder_packets_total');
    const sentAtRestart = await metric('edge_gateway_webrtc_packets_sent_total');
    const heardAtRestart = p.count('audio', PT.OPUS);
    const seenAtRestart = p.count('video', PT.H264);
    await expect.poll(() => transcoderPids().filter((other) => other !== pid), POLL).toHaveLength(1);
    // The new ffmpeg's Opus reaches the gateway again and the session still sends.
    await expect
      .poll(() => metric('edge_gateway_webrtc_audio_transcoder_packets_total'), POLL)
      .toBeGreaterThan(packetsAtRestart + 25);
    await expect.poll(() => metric('edge_gateway_webrtc_packets_sent_total'), POLL).toBeGreaterThan(sentAtRestart + 50);
    // And the viewer hears the new ffmpeg's Opus, its video going on.
    await expect.poll(() => p.count('audio', PT.OPUS), POLL).toBeGreaterThan(heardAtRestart + 25);
    expect(p.count('video', PT.H264)).toBeGreaterThan(seenAtRestart);
    expect(await metric('edge_gateway_webrtc_audio_transcoder_listeners')).toBe(1);
    await p.close();
    await expect.poll(() => transcoderPids(), POLL).toEqual([]);
  }, 150_000);
});
