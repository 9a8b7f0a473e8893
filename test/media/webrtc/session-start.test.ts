import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import nodeDataChannel from 'node-datachannel';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveRoutes } from '../../../src/api/routes/live.js';
import type { FanOutReader } from '../../../src/media/relay/fanout.js';
import { RelayStreams } from '../../../src/media/relay/streams.js';
import { readRtpHeader } from '../../../src/media/rtp.js';
import { TicketSigner } from '../../../src/media/ticket.js';
import type { WebRtcSessions } from '../../../src/media/webrtc/sessions.js';
import { loopbackWebRtcSessions } from './loopback-sessions.js';
import { gatheredOffer, isPeerRace, madeAgain, stateHistory, takeAnswer } from '../../support/test-peer.js';
import { startSimulatedRtsp, type SimulatedRtsp } from '../../../src/onvif/simulator/rtsp.js';

// What a new WebRTC peer gets first, seen from a real peer (node-datachannel, recvonly, as a
// browser would be) through the WHEP routes and the relay's shared camera session: its first
// picture is a keyframe with its parameter sets before anything else (a browser drops pictures
// from the middle of a group, and an IDR without SPS/PPS, and asks for a keyframe instead: that was
// the 0.5-2 s of the first frame); the cached burst's timestamps and sequence numbers run on with
// no step back or gap; a PLI from the peer brings a keyframe (from the relay's cache) with its
// parameter sets again; a NACK reaches the session (counted).

const logger = pino({ level: 'silent' });
const USER = 'admin';
const PASSWORD = 'cam-secret-start';
const H264_PT = 102;
let camera: SimulatedRtsp;
let streams: RelayStreams;
let webrtc: WebRtcSessions;
let app: FastifyInstance;
let base = '';
let detachWarm: (() => void) | null = null;
const tickets = new TicketSigner(randomBytes(32));

beforeAll(async () => {
  camera = await startSimulatedRtsp({
    cameras: 1,
    host: '127.0.0.1',
    port: 0,
    username: USER,
    password: PASSWORD,
    logger,
  });
  streams = new RelayStreams({
    locate: (deviceId) =>
      deviceId === 'cam' ? { url: camera.url(0, 'main'), username: USER, password: PASSWORD } : null,
    logger,
    idleCloseS: 5,
  });
  webrtc = loopbackWebRtcSessions(streams, logger);
  app = Fastify();
  await app.register(liveRoutes, { tickets, webrtc, maxSessionS: 600, prefix: '/live' });
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  // A reader keeping the camera session and its cached group of pictures warm, as a viewer would.
  const handle = await streams.acquire('cam', 'main');
  const idle: FanOutReader = {
    pendingBytes: () => 0,
    deliver: () => undefined,
    deliverRtcp: () => undefined,
    evict: () => undefined,
  };
  detachWarm = handle.attach(idle);
  for (let waited = 0; !handle.hasCachedKeyframe(); waited += 100) {
    if (waited > 30_000) throw new Error('the relay cached no keyframe of the simulated camera in 30 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  // Well into a group, so that the cache holds pictures after the keyframe too.
  await new Promise((r) => setTimeout(r, 400));
}, 120_000);
afterAll(async () => {
  webrtc?.close();
  detachWarm?.();
  await app?.close();
  streams?.close();
  await camera?.stop();
});

interface Received {
  at: number;
  sequence: number;
  timestamp: number;
  /** NAL unit types in the packet: a single unit's, a STAP-A's units', an FU-A start's. */
  nals: number[];
  packet: Buffer;
}

function nalTypes(packet: Buffer, offset: number): number[] {
  const type = (packet[offset] as number) & 0x1f;
  if (type >= 1 && type <= 23) return [type];
  if (type === 28) return ((packet[offset + 1] as number) & 0x80) !== 0 ? [(packet[offset + 1] as number) & 0x1f] : [];
  if (type !== 24) return [];
  const out: number[] = [];
  for (let at = offset + 1; at + 2 < packet.length;) {
    const size = packet.readUInt16BE(at);
    if (size === 0) break;
    out.push((packet[at + 2] as number) & 0x1f);
    at += 2 + size;
  }
  return out;
}

/** A peer made again when the library's own race refuses the answer (test/support/test-peer.ts). */
const viewer = () => madeAgain('session-start', () => peer(whep()), isPeerRace);

/** A recvonly H.264 peer that POSTs its offer to the WHEP URL and records every RTP packet. */
async function peer(url: string) {
  const pc = new nodeDataChannel.PeerConnection('test-peer', { iceServers: [], bindAddress: '127.0.0.1' });
  const history = stateHistory(pc);
  // SendRecv so that the peer may send its own RTCP (a NACK) through the track; the answer is sendonly.
  const video = new nodeDataChannel.Video('0', 'SendRecv');
  video.addH264Codec(H264_PT, 'level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f');
  for (const line of [`a=rtcp-fb:${H264_PT} nack`, `a=rtcp-fb:${H264_PT} nack pli`]) video.parseSdpLine(line);
  video.addSSRC(0x5eed, 'test-peer');
  const track = pc.addTrack(video);
  track.setMediaHandler(new nodeDataChannel.RtcpReceivingSession());
  const received: Received[] = [];
  track.onMessage((message) => {
    // RTCP (packet types 192-223 in the second byte) is not counted.
    const second = message[1] as number;
    const header = second >= 192 && second <= 223 ? null : readRtpHeader(message);
    if (!header) return;
    received.push({
      at: Date.now(),
      sequence: header.sequence,
      timestamp: header.timestamp,
      nals: nalTypes(message, header.payloadOffset),
      packet: Buffer.from(message),
    });
  });
  const offer = await gatheredOffer(pc);
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/sdp' }, body: offer });
  const answer = await res.text();
  expect(res.status, answer).toBe(201);
  const session = new URL(res.headers.get('location') ?? '', base);
  await takeAnswer(pc, answer, () => fetch(session, { method: 'DELETE' }), history);
  return {
    pc,
    track,
    received,
    /** For a failure's message: where the peer's connection stands, and the sessions' counters. */
    state: () =>
      `peer ${pc.state()}, ICE ${pc.iceState()}, track open ${track.isOpen()} (${history()}); sessions ${JSON.stringify(webrtc.stats())}`,
    close: async () => {
      await fetch(session, { method: 'DELETE' });
      pc.close();
    },
  };
}

/** Waits until the peer has more than `count` packets; a failure says where its connection stood. */
async function receives(p: Awaited<ReturnType<typeof peer>>, count: number): Promise<void> {
  try {
    await expect.poll(() => p.received.length, { timeout: 20_000, interval: 50 }).toBeGreaterThan(count);
  } catch (err) {
    throw new Error(`the peer got ${p.received.length} packets in 20 s: ${p.state()}`, { cause: err });
  }
}

/** Signed difference a − b of two 32-bit RTP timestamps (or 16-bit sequence numbers). */
const diff32 = (a: number, b: number) => ((a - b) << 0) | 0;
const diff16 = (a: number, b: number) => (((a - b) & 0xffff) ^ 0x8000) - 0x8000;

/** The packets of the picture that starts at index `from` (same timestamp). */
function pictureAt(received: Received[], from: number): Received[] {
  const ts = received[from]?.timestamp;
  const out: Received[] = [];
  for (let i = from; i < received.length && received[i]?.timestamp === ts; i++) out.push(received[i] as Received);
  return out;
}

const whep = () =>
  `${base}/live/${tickets.issue({ deviceId: 'cam', profile: 'main', expiresAt: Date.now() + 60_000 })}/whep`;

describe('the start of a WebRTC peer', () => {
  it('begins with the parameter sets and the keyframe, then the cached pictures with timestamps and sequence numbers running on', async () => {
    const p = await viewer();
    try {
      await receives(p, 60);
      const first = pictureAt(p.received, 0);
      const nals = first.flatMap((r) => r.nals);
      // SPS (7) and PPS (8) come before the first slice of the IDR (5), all in the first picture.
      expect(nals).toContain(7);
      expect(nals).toContain(8);
      expect(nals).toContain(5);
      expect(nals.indexOf(7)).toBeLessThan(nals.indexOf(5));
      expect(nals.indexOf(8)).toBeLessThan(nals.indexOf(5));
      expect(first[0]?.nals[0]).toBe(7);
      // Nothing of another picture came before it, and no step back or gap after it.
      const seen = [...p.received];
      for (let i = 1; i < seen.length; i++) {
        expect(diff16((seen[i] as Received).sequence, (seen[i - 1] as Received).sequence)).toBe(1);
        expect(diff32((seen[i] as Received).timestamp, (seen[i - 1] as Received).timestamp)).toBeGreaterThanOrEqual(0);
      }
      // The cached group came as a burst: its later pictures follow the keyframe closely in RTP time
      // (1 ms, 90 ticks, apart), not at the camera's frame spacing.
      const second = seen.findIndex((r) => r.timestamp !== first[0]?.timestamp);
      expect(second).toBeGreaterThan(0);
      expect(diff32((seen[second] as Received).timestamp, first[0]?.timestamp as number)).toBe(90);
      expect(webrtc.stats().pli).toBe(0);
    } finally {
      await p.close();
    }
  }, 60_000);

  it('answers a PLI with a keyframe and its parameter sets from the cache; counts a NACK', async () => {
    const p = await viewer();
    try {
      await receives(p, 20);
      const fromCacheBefore = webrtc.stats().keyframesFromCache;
      const mark = p.received.length;
      expect(p.track.requestKeyframe()).toBe(true);
      await expect
        .poll(() => webrtc.stats().keyframesFromCache, { timeout: 5_000, interval: 50 })
        .toBe(fromCacheBefore + 1);
      // A picture after the PLI starts with SPS, PPS and the IDR again (not waiting for the camera's next keyframe).
      await expect
        .poll(() => p.received.slice(mark).findIndex((r) => r.nals[0] === 7), { timeout: 5_000, interval: 50 })
        .toBeGreaterThanOrEqual(0);
      const at = mark + p.received.slice(mark).findIndex((r) => r.nals[0] === 7);
      await expect
        .poll(() => pictureAt(p.received, at).flatMap((r) => r.nals), { timeout: 5_000, interval: 50 })
        .toEqual(expect.arrayContaining([7, 8, 5]));
      // Timestamps still never step back across the served keyframe.
      for (let i = 1; i < p.received.length; i++)
        expect(
          diff32((p.received[i] as Received).timestamp, (p.received[i - 1] as Received).timestamp),
        ).toBeGreaterThanOrEqual(0);

      // A generic NACK (RFC 4585 6.2.1) reaches the session and is counted. That the named packet
      // comes again is not checked here: the peer's SRTP replay protection drops a second copy of a
      // packet it already has, and loopback loses nothing on its own.
      const lost = p.received[5] as Received;
      const nack = Buffer.alloc(16);
      nack[0] = 0x81; // V=2, FMT=1
      nack[1] = 205; // RTPFB
      nack.writeUInt16BE(3, 2);
      nack.writeUInt32BE(0x5eed, 4);
      nack.writeUInt32BE(readRtpHeader(lost.packet)?.ssrc ?? 0, 8);
      nack.writeUInt16BE(lost.sequence, 12);
      nack.writeUInt16BE(0, 14);
      const nacksBefore = webrtc.stats().nack;
      p.track.sendMessageBinary(nack);
      await expect.poll(() => webrtc.stats().nack, { timeout: 5_000, interval: 50 }).toBe(nacksBefore + 1);
    } finally {
      await p.close();
    }
  }, 60_000);
});
