import nodeDataChannel from 'node-datachannel';
import { readRtpHeader } from '../../../src/media/rtp.js';
import type { Client } from '../../support/https.js';
import { gatheredOffer, isPeerRace, madeAgain, stateHistory, takeAnswer } from '../../support/test-peer.js';

// A real WebRTC viewer for the tests of the started gateway: a node-datachannel peer (recvonly, as
// a browser's WHEP offer is) with the video codec and the audio codecs asked for, POSTed over the
// test's HTTPS client; it counts the RTP packets that reach each track by payload type.

export const PT = { H264: 102, H265: 104, OPUS: 111, PCMU: 0 } as const;

export interface PeerOffer {
  video: 'H264' | 'H265';
  /** Audio codecs offered, in order; none: no audio section. */
  audio: Array<'OPUS' | 'PCMU'>;
}

export interface RecordingPeer {
  status: number;
  /** The answer (or the error body). */
  body: string;
  location: string | null;
  /** Offers the gateway answered for this viewer: more than 1 when the library's race made it again. */
  attempts: number;
  /** RTP packets received, by track and payload type. */
  packets: { video: Map<number, number>; audio: Map<number, number> };
  /** The first payload byte of every audio packet, distinct (an Opus packet's TOC byte, RFC 6716 3.1). */
  audioFirstBytes: Set<number>;
  count(kind: 'video' | 'audio', payloadType: number): number;
  /** The receiving tracks, kept referenced for as long as the peer is (see startPeer). */
  tracks: readonly nodeDataChannel.Track[];
  /** The peer connection's state changes as they came, for a failure's message (stateHistory). */
  states: () => string;
  close(): Promise<void>;
}

/** A viewer on a fresh address from `whepPath`, made again when the library's own race refuses the answer. */
export function startPeer(request: Client, whepPath: () => Promise<string>, offer: PeerOffer): Promise<RecordingPeer> {
  let attempts = 0;
  return madeAgain('recording-peer', async () => offerTo(request, await whepPath(), offer, ++attempts), isPeerRace);
}

async function offerTo(request: Client, whepPath: string, offer: PeerOffer, attempts: number): Promise<RecordingPeer> {
  const pc = new nodeDataChannel.PeerConnection('test-viewer', { iceServers: [], bindAddress: '127.0.0.1' });
  const packets = { video: new Map<number, number>(), audio: new Map<number, number>() };
  const audioFirstBytes = new Set<number>();
  const record = (into: Map<number, number>) => (message: Buffer) => {
    const second = message[1] as number;
    if (second >= 192 && second <= 223) return; // RTCP
    const header = readRtpHeader(message);
    if (!header) return;
    into.set(header.payloadType, (into.get(header.payloadType) ?? 0) + 1);
    if (into === packets.audio) audioFirstBytes.add(message[header.payloadOffset] as number);
  };
  const video = new nodeDataChannel.Video('0', 'RecvOnly');
  if (offer.video === 'H265') video.addH265Codec(PT.H265);
  else video.addH264Codec(PT.H264, 'level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f');
  // Held by the returned peer: node-datachannel closes a track whose JavaScript object is collected
  // (TrackWrapper's destructor), and the peer then receives nothing while the gateway sends on.
  const tracks: nodeDataChannel.Track[] = [];
  const videoTrack = pc.addTrack(video);
  tracks.push(videoTrack);
  videoTrack.setMediaHandler(new nodeDataChannel.RtcpReceivingSession());
  videoTrack.onMessage(record(packets.video));
  if (offer.audio.length > 0) {
    const audio = new nodeDataChannel.Audio('1', 'RecvOnly');
    for (const codec of offer.audio) {
      if (codec === 'OPUS') audio.addOpusCodec(PT.OPUS);
      else audio.addAudioCodec(PT.PCMU, 'PCMU/8000');
    }
    const audioTrack = pc.addTrack(audio);
    tracks.push(audioTrack);
    audioTrack.setMediaHandler(new nodeDataChannel.RtcpReceivingSession());
    audioTrack.onMessage(record(packets.audio));
  }
  const history = stateHistory(pc);
  const sdp = await gatheredOffer(pc);
  const res = await request(whepPath, { method: 'POST', headers: { 'content-type': 'application/sdp' }, body: sdp });
  const location = typeof res.headers.location === 'string' ? res.headers.location : null;
  if (res.status === 201) await takeAnswer(pc, res.text, () => request(location ?? '', { method: 'DELETE' }), history);
  return {
    status: res.status,
    body: res.text,
    location,
    attempts,
    states: history,
    tracks,
    packets,
    audioFirstBytes,
    count: (kind, payloadType) => packets[kind].get(payloadType) ?? 0,
    close: async () => {
      if (location) await request(location, { method: 'DELETE' });
      pc.close();
    },
  };
}

/** The m-line of a kind in an SDP answer, e.g. `m=audio 0 UDP/TLS/RTP/SAVPF 111`. */
export function mLine(sdp: string, kind: 'audio' | 'video'): string | undefined {
  return sdp.split(/\r?\n/).find((l) => l.startsWith(`m=${kind} `));
}
