import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import nodeDataChannel from 'node-datachannel';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../../src/onvif/simulator/fleet.js';
import { firstOnlineDevice, startTestGateway, type TestGateway } from '../support/gateway.js';
import { ffmpegPlays, hlsAddress } from '../support/live-hls.js';
import { gatheredOffer, isPeerRace, madeAgain, stateHistory, takeAnswer } from '../support/test-peer.js';

// Every kind of viewer at once on one camera — 5 WebRTC peers (node-datachannel, a real
// WebRTC stack: ICE, DTLS, SRTP), 2 LL-HLS players and 2 RTSP players (ffmpeg) and the recorder —
// and the camera sees exactly one RTSP session (counted on its side, with `ss`), while every viewer
// receives video.

const run = promisify(execFile);
const PASSWORD = 'mixed-secret';
let fleet: Fleet;
let t: TestGateway;
let deviceId = '';

beforeAll(async () => {
  fleet = await startFleet({
    count: 1,
    host: '127.0.0.1',
    basePort: 0,
    username: 'admin',
    password: PASSWORD,
    discovery: null,
    rtspPort: 0,
    logger: pino({ level: 'silent' }),
  });
  t = await startTestGateway({
    cameras: [{ name: 'Drive', onvif_url: fleet.cameras[0]!.deviceServiceUrl, username: 'admin', password: PASSWORD }],
    webrtc: { bind_address: '127.0.0.1' },
  });
  deviceId = await firstOnlineDevice(t);
}, 120_000);
afterAll(async () => {
  await t?.stop();
  await fleet?.stop();
});

/** Established TCP connections to the camera's RTSP port: the camera's own view of its sessions. */
async function cameraConnections(): Promise<number> {
  const { stdout } = await run('ss', ['-Htn', 'state', 'established', `( dport = :${fleet.rtsp!.port} )`]);
  return stdout.split('\n').filter((l) => l.trim()).length;
}

async function streamUrl(protocol: 'rtsp' | 'webrtc'): Promise<string> {
  const res = await t.request(`/v1/devices/${deviceId}/stream?protocol=${protocol}`, {
    headers: await t.auth('devices:read'),
  });
  expect(res.status, res.text).toBe(200);
  return (res.json() as { stream_url: string }).stream_url;
}

interface Peer {
  pc: nodeDataChannel.PeerConnection;
  /** Held: a track nothing refers to is garbage-collected, and its onMessage callback with it. */
  track: nodeDataChannel.Track;
  packets: number;
  location: string;
}

/** A receive-only WebRTC peer that offers H.264 and counts the RTP packets it gets. */
async function webrtcViewer(): Promise<Peer> {
  const pc = new nodeDataChannel.PeerConnection('viewer', { iceServers: [], bindAddress: '127.0.0.1' });
  const history = stateHistory(pc);
  const video = new nodeDataChannel.Video('0', 'RecvOnly');
  video.addH264Codec(102, 'level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f');
  const track = pc.addTrack(video);
  track.setMediaHandler(new nodeDataChannel.RtcpReceivingSession());
  const peer: Peer = { pc, track, packets: 0, location: '' };
  track.onMessage(() => peer.packets++);
  const offer = await gatheredOffer(pc);
  const res = await t.request(new URL(await streamUrl('webrtc')).pathname, {
    method: 'POST',
    headers: { 'content-type': 'application/sdp' },
    body: offer,
  });
  expect(res.status, res.text).toBe(201);
  peer.location = String(res.headers.location);
  // When refused, its session on the gateway ends with it, so that it is not counted among the viewers.
  await takeAnswer(pc, res.text, () => t.request(peer.location, { method: 'DELETE' }), history);
  return peer;
}

/** A viewer, made again when node-datachannel's own offer side refuses the answer (isPeerRace). */
const webrtcViewerRetried = (): Promise<Peer> => madeAgain('mixed-viewers', webrtcViewer, isPeerRace);

describe('one camera session for every kind of viewer', () => {
  it(
    '5 WebRTC + 2 LL-HLS + 2 RTSP viewers and the recorder: the camera sees one RTSP session, every viewer gets video',
    { timeout: 180_000 },
    async () => {
      // The recorder reads the camera from the start: that is the one session.
      await expect.poll(cameraConnections, { timeout: 30_000 }).toBe(1);
      const peers: Peer[] = [];
      const rtsp = await Promise.all([streamUrl('rtsp'), streamUrl('rtsp')]);
      const rtspViewers = rtsp.map((url) =>
        spawn(
          'ffmpeg',
          ['-nostdin', '-v', 'error', '-rtsp_transport', 'tcp', '-i', url, '-t', '8', '-c', 'copy', '-f', 'null', '-'],
          { stdio: 'ignore' },
        ),
      );
      try {
        for (let i = 0; i < 5; i++) peers.push(await webrtcViewerRetried());
        const hls = await Promise.all([hlsAddress(t, deviceId), hlsAddress(t, deviceId)]);
        const played = Promise.all(hls.map((h) => ffmpegPlays(h.url, 4)));
        const rtspDone = Promise.all(rtspViewers.map((v) => new Promise<number | null>((r) => v.once('exit', r))));
        // Every WebRTC peer receives packets.
        await expect
          .poll(() => Math.min(...peers.map((p) => p.packets)), { timeout: 30_000, interval: 250 })
          .toBeGreaterThan(50)
          .catch(async (err: Error) => {
            const webrtc = (await t.metrics())
              .split('\n')
              .filter((l) => l.startsWith('edge_gateway_webrtc'))
              .join('\n');
            throw new Error(
              `${err.message}: packets ${peers.map((p) => p.packets).join(',')}; states ${peers.map((p) => `${p.pc.state()}/${p.pc.iceState()}`).join(',')}\n${webrtc}`,
            );
          });
        const text = await t.metrics();
        expect(Number(/^edge_gateway_webrtc_sessions\{state="open"\} (\d+)/m.exec(text)?.[1])).toBe(5);
        // All of them at once, still on one camera session.
        expect(await cameraConnections()).toBe(1);
        const hlsPlayed = await played;
        for (const p of hlsPlayed)
          expect({ code: p.code, videoFrames: p.frames.video > 30 }, p.stderr).toEqual({ code: 0, videoFrames: true });
        expect(await rtspDone).toEqual([0, 0]);
        expect(await cameraConnections()).toBe(1);
        const before = peers.map((p) => p.packets);
        await new Promise((r) => setTimeout(r, 1000));
        // The WebRTC peers kept receiving while the others came and went.
        const m1 = (await t.metrics())
          .split('\n')
          .filter((l) => /^edge_gateway_(webrtc_packets_sent|relay_packets_delivered)/.test(l))
          .join('\n');
        await new Promise((r) => setTimeout(r, 3000));
        const webrtcLines =
          m1 +
          '\n--- 3 s later ---\n' +
          (await t.metrics())
            .split('\n')
            .filter((l) => /^edge_gateway_(webrtc|relay|hls)/.test(l))
            .join('\n');
        expect(
          peers.map((p, i) => p.packets > before[i]!),
          `packets before ${before.join(',')} after ${peers.map((p) => p.packets).join(',')}; states ${peers.map((p) => p.pc.state()).join(',')}\n${webrtcLines}`,
        ).toEqual(peers.map(() => true));
      } finally {
        for (const v of rtspViewers) v.kill();
        for (const p of peers) {
          if (p.location) await t.request(p.location, { method: 'DELETE' });
          p.pc.close();
        }
      }
      // The viewers are gone; the recorder goes on reading on that same session.
      expect(await cameraConnections()).toBe(1);
    },
  );
});
