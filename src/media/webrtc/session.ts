import { randomBytes, randomInt } from 'node:crypto';
import { Audio, PeerConnection, RtcpNackResponder, Video, type Track } from 'node-datachannel';
import type { BaseLogger } from 'pino';
import { startStopwatch, type Stopwatch } from '../../domain/stopwatch.js';
import type { FanOutReader } from '../relay/fanout.js';
import type { StreamHandle } from '../relay/streams.js';
import { readLocalTransport, withoutMdnsCandidates, writeAnswer } from './answer.js';
import type { CodecChoice } from './codec-match.js';
import { endedWhileStarting, WhepRefusedError } from './errors.js';
import type { WebRtcOffer } from './offer.js';
import { parseSpropParameterSets } from '../h26x.js';
import { mediaCodecs, parseSdp } from '../sdp.js';
import { H264ParameterSetInjector } from './inband-parameter-sets.js';
import { readPeerFeedback, RtpRewriter } from './rtp-rewriter.js';

// One WHEP viewer: a node-datachannel PeerConnection whose tracks carry the relay's packets as they
// come from the camera (a copy with this peer's header, never a decode). The session is a reader of
// the relay's fan-out like an RTSP viewer, so the camera keeps one session whatever the viewers.
//
// Lifetime: ICE and DTLS must complete within connectTimeoutMs; a peer that stops answering ICE
// consent checks (RFC 7675: libjuice fails the transport) or stays disconnected longer than that
// is dropped; the session ends at maxLifetimeMs (rtsp.max_session_s), on DELETE, or when the
// fan-out evicts it. Every end runs close() once, which detaches and closes the PeerConnection.

export type SessionEnd =
  'deleted' | 'ice_timeout' | 'ice_failed' | 'consent_lost' | 'max_lifetime' | 'evicted' | 'shutdown';

export interface WebRtcSessionOptions {
  id: string;
  offer: WebRtcOffer;
  offerSdp: string;
  choice: CodecChoice;
  stream: StreamHandle;
  /** Where host candidates are gathered: one address; null: every interface of the box. */
  bindAddress: string | null;
  iceServers: string[];
  portRange: { begin: number; end: number } | null;
  connectTimeoutMs: number;
  maxLifetimeMs: number;
  /** Packets kept per track for answering NACKs. */
  nackBufferPackets: number;
  /** Least time between two keyframes served to this peer from the cache. */
  keyframeIntervalMs: number;
  logger: BaseLogger;
  /** performance.now() when the WHEP POST was received: the start timeline counts from it. */
  receivedAt?: number;
  /**
   * The Opus packets of the AAC transcoder (webrtc.audio_transcode) for a choice whose audio is
   * transcoded: subscribes, returns the unsubscribe (null: no transcoder to be had, no sound).
   */
  opus?: (listener: (packet: Buffer) => void) => (() => void) | null;
  onEnd: (session: WebRtcSession, reason: SessionEnd) => void;
}

/**
 * When each step of a session's start happened, in ms after the WHEP POST was received
 * (null until it happens): to see where the time to the first picture goes (logged once the first
 * live packet after the cached burst is sent).
 */
export interface StartTimeline {
  answer: number | null;
  iceConnected: number | null;
  /** DTLS done: libdatachannel's peer connection state \`connected\`. */
  dtlsConnected: number | null;
  videoOpen: number | null;
  firstVideoPacket: number | null;
  /** The last packet of the first cached burst. */
  burstSent: number | null;
  burstPackets: number;
  burstBytes: number;
  firstLivePacket: number | null;
  firstKeyframeRequest: number | null;
}

type StartStep = Exclude<keyof StartTimeline, 'burstPackets' | 'burstBytes'>;

export interface SessionCounters {
  packetsSent: number;
  packetsFailed: number;
  pli: number;
  fir: number;
  nack: number;
  keyframesFromCache: number;
  keyframesFromCamera: number;
}

interface Sender {
  track: Track;
  rewriter: RtpRewriter;
  cameraTrack: number;
}

const GATHER_TIMEOUT_MS = 5000;

export class WebRtcSession {
  readonly counters: SessionCounters = {
    packetsSent: 0,
    packetsFailed: 0,
    pli: 0,
    fir: 0,
    nack: 0,
    keyframesFromCache: 0,
    keyframesFromCamera: 0,
  };
  private readonly pc: PeerConnection;
  private video: Sender | null = null;
  private audio: Sender | null = null;
  /** Every track of the PeerConnection, inactive ones too: each is closed with it (see addTrack). */
  private readonly tracks: Track[] = [];
  private detach: (() => void) | null = null;
  private stopOpus: (() => void) | null = null;
  /** Fails the answer being made (the session closed while its candidates were gathered). */
  private abandonAnswer: ((err: Error) => void) | null = null;
  private parameterSets: H264ParameterSetInjector | null = null;
  private inBurst = false;
  /** Video packets go out only once the cached keyframe has (see startVideo). */
  private videoStarted = false;
  private videoStartQueued = false;
  private lastKeyframeServed = -Infinity;
  private readonly timers = new Set<NodeJS.Timeout>();
  private disconnectedTimer: NodeJS.Timeout | null = null;
  private connected = false;
  private ended: SessionEnd | null = null;
  readonly startedAt = Date.now();
  private readonly steps: Stopwatch<StartStep>;
  /** The first cached burst: packets and bytes. */
  private readonly burst = { packets: 0, bytes: 0 };

  private constructor(private readonly opts: WebRtcSessionOptions) {
    this.steps = startStopwatch(() => performance.now(), opts.receivedAt);
    this.pc = new PeerConnection(opts.id, {
      iceServers: opts.iceServers,
      ...(opts.bindAddress ? { bindAddress: opts.bindAddress } : {}),
      ...(opts.portRange ? { portRangeBegin: opts.portRange.begin, portRangeEnd: opts.portRange.end } : {}),
      enableIceTcp: false,
    });
  }

  get endReason(): SessionEnd | null {
    return this.ended;
  }

  get isConnected(): boolean {
    return this.connected;
  }

  /** Starts the session from the offer; resolves with the SDP answer once host candidates are gathered. */
  static async open(opts: WebRtcSessionOptions): Promise<{ session: WebRtcSession; answer: string }> {
    const session = new WebRtcSession(opts);
    try {
      return { session, answer: await session.negotiate() };
    } catch (err) {
      session.close('shutdown');
      throw err;
    }
  }

  private async negotiate(): Promise<string> {
    const { choice, offer } = this.opts;
    const cname = randomBytes(8).toString('base64url');
    const streamId = `live-${randomBytes(6).toString('hex')}`;
    const videoSsrc = randomInt(1, 0xffffffff);
    let audioSsrc = randomInt(1, 0xffffffff);
    if (audioSsrc === videoSsrc) audioSsrc = (videoSsrc + 1) >>> 0;

    if (choice.video.encoding === 'H264') {
      const camera = mediaCodecs(parseSdp(this.opts.stream.sdp)).find((c) => c.index === choice.video.cameraTrack);
      if (camera) this.parameterSets = new H264ParameterSetInjector(parseSpropParameterSets(camera.fmtp));
    }
    for (const m of offer.media) {
      if (m.index === choice.video.offerIndex) {
        const v = new Video(m.mid, 'SendOnly');
        if (choice.video.encoding === 'H265') v.addH265Codec(choice.video.payloadType);
        else v.addH264Codec(choice.video.payloadType, choice.video.fmtp);
        v.addSSRC(videoSsrc, cname, streamId, 'video');
        this.video = this.sender(
          this.addTrack(v),
          { ssrc: videoSsrc, payloadType: choice.video.payloadType, clockRate: 90000 },
          choice.video.cameraTrack,
        );
      } else if (choice.audio && m.index === choice.audio.offerIndex) {
        const a = new Audio(m.mid, 'SendOnly');
        if (choice.audio.encoding === 'OPUS') a.addOpusCodec(choice.audio.payloadType);
        else a.addAudioCodec(choice.audio.payloadType, `${choice.audio.encoding}/${choice.audio.clockRate}`);
        a.addSSRC(audioSsrc, cname, streamId, 'audio');
        this.audio = this.sender(
          this.addTrack(a),
          { ssrc: audioSsrc, payloadType: choice.audio.payloadType, clockRate: choice.audio.clockRate },
          choice.audio.cameraTrack,
        );
      } else if (m.kind === 'audio' || m.kind === 'video') {
        // Otherwise the stack answers such a section on its own, with every offered codec.
        this.addTrack(m.kind === 'audio' ? new Audio(m.mid, 'Inactive') : new Video(m.mid, 'Inactive'));
      }
    }
    this.pc.onStateChange((state) => this.stateChanged(state));
    this.pc.onIceStateChange((state) => {
      if (state === 'connected' || state === 'completed') this.steps.mark('iceConnected');
    });
    const gathered = new Promise<void>((resolve, reject) => {
      const timer = this.timer(GATHER_TIMEOUT_MS, () =>
        reject(new WhepRefusedError('stack_failed', 'the WebRTC stack gathered no candidates in time', 5)),
      );
      // close() clears the timer above: without this the answer would wait for ever, holding its
      // place among the sessions starting (webrtc.max_sessions, per address).
      this.abandonAnswer = reject;
      this.pc.onGatheringStateChange((state) => {
        if (state !== 'complete') return;
        clearTimeout(timer);
        this.timers.delete(timer);
        resolve();
      });
    });
    this.pc.setRemoteDescription(withoutMdnsCandidates(this.opts.offerSdp), 'offer');
    await gathered;
    this.abandonAnswer = null;
    // Nothing may attach to the camera's stream for a session already closed: nothing would detach it.
    if (this.ended !== null) throw endedWhileStarting();
    const local = this.pc.localDescription();
    if (!local) throw new WhepRefusedError('stack_failed', 'the WebRTC stack made no answer', 5);
    this.timer(this.opts.connectTimeoutMs, () => {
      if (!this.connected) this.close('ice_timeout');
    });
    this.timer(this.opts.maxLifetimeMs, () => this.close('max_lifetime'));
    // Reading starts now so that the camera session stays open while ICE and DTLS run (the relay
    // closes an unread one after rtsp.idle_close_s); packets go nowhere until the track opens,
    // which attaches again to get the cached group of pictures first.
    this.attach();
    // Started with the answer, as the video's camera session: ffmpeg's start overlaps ICE and DTLS.
    if (choice.audio?.transcoded) this.stopOpus = this.opts.opus?.((packet) => this.sendOpus(packet)) ?? null;
    this.steps.mark('answer');
    return writeAnswer(offer, choice, readLocalTransport(local.sdp), {
      videoSsrc,
      audioSsrc,
      cname,
      streamId,
      sessionId: String(randomInt(1, 2 ** 47)),
    });
  }

  /**
   * node-datachannel holds the event loop open for each track (thread-safe functions) until the
   * track itself is closed (its open/message callbacks) and has reported that close to JavaScript,
   * which it does only to an onClosed callback; closing the PeerConnection does neither. Without
   * both, a daemon that had served one WebRTC viewer did not exit after its shutdown.
   */
  private addTrack(media: Video | Audio): Track {
    const track = this.pc.addTrack(media);
    track.onClosed(() => undefined);
    this.tracks.push(track);
    return track;
  }

  private sender(
    track: Track,
    header: { ssrc: number; payloadType: number; clockRate: number },
    cameraTrack: number,
  ): Sender {
    // libdatachannel keeps the last packets sent and resends those a NACK names (bounded, in C++).
    track.setMediaHandler(new RtcpNackResponder(this.opts.nackBufferPackets));
    const rewriter = new RtpRewriter({
      ...header,
      initialSequence: randomInt(0, 0x10000),
      initialTimestamp: randomInt(0, 0xffffffff),
    });
    const sender = { track, rewriter, cameraTrack };
    track.onOpen(() => {
      if (sender !== this.video) return;
      this.steps.mark('videoOpen');
      this.startVideo();
    });
    track.onMessage((message) => this.feedback(message));
    return sender;
  }

  // Nothing queues on our side: a packet goes from deliver() through SRTP into the UDP socket in
  // the same call (libdatachannel sends media synchronously; node-datachannel's Track has no
  // bufferedAmount), so a slow peer loses packets in its own socket, never delaying the fan-out.
  // Nothing may throw into the fan-out either: the camera session and every other viewer share it.
  private readonly reader: FanOutReader = {
    pendingBytes: () => 0,
    deliver: (track, packet) => {
      try {
        const video = this.video;
        if (video && track === video.cameraTrack) {
          if (!this.videoStarted) {
            // The track is open before its onOpen callback reaches us (it comes through the event
            // loop): start from the cached keyframe as soon as it is, after this packet's fan-out.
            if (!this.videoStartQueued && video.track.isOpen()) {
              this.videoStartQueued = true;
              queueMicrotask(() => this.startVideo());
            }
            return;
          }
          const sets = this.parameterSets?.before(packet);
          if (sets) this.send(video, sets);
          this.send(video, packet);
        }
        // Cached audio is in the past: it would only delay the sound behind the picture. AAC that
        // is transcoded comes from the transcoder instead (sendOpus).
        else if (this.audio && track === this.audio.cameraTrack && !this.inBurst && !this.opts.choice.audio?.transcoded)
          this.send(this.audio, packet);
      } catch (err) {
        this.counters.packetsFailed++;
        this.opts.logger.debug(
          { session: this.opts.id, err: (err as Error).message },
          'webrtc: a packet could not be sent',
        );
      }
    },
    deliverRtcp: () => undefined,
    evict: () => {
      this.detach = null;
      this.close('evicted');
    },
  };

  /** An Opus packet of the shared transcoder; like the fan-out, nothing may throw into it. */
  private sendOpus(packet: Buffer): void {
    if (!this.audio || this.ended !== null) return;
    try {
      this.send(this.audio, packet);
    } catch {
      this.counters.packetsFailed++;
    }
  }

  /**
   * Video starts from the cached keyframe (a new attach delivers the cached group first); audio
   * joins whatever is flowing. Until then no video packet is sent: a browser given pictures from
   * the middle of a group, or a keyframe without its parameter sets, drops them and asks for a
   * keyframe instead, which costs up to a camera GOP (measured: 0.5-2 s).
   */
  private startVideo(): void {
    if (this.videoStarted || this.ended !== null || !this.video?.track.isOpen()) return;
    this.videoStarted = true;
    this.attach();
  }

  /** Attaches to the fan-out: the cached group of pictures comes first, packed at once. */
  private attach(): void {
    this.detach?.();
    // Each burst is new pictures to the peer (new timestamps): its keyframe gets the sets again.
    this.parameterSets?.reset();
    this.inBurst = true;
    this.video?.rewriter.beginBurst();
    try {
      this.detach = this.opts.stream.attach(this.reader);
    } finally {
      this.video?.rewriter.endBurst();
      this.inBurst = false;
    }
    if (this.burst.packets > 0) this.steps.mark('burstSent');
  }

  /** The start's steps so far, in whole ms after the WHEP POST, and the first cached burst. */
  get timeline(): StartTimeline {
    const ms = (step: StartStep) => {
      const elapsed = this.steps.elapsed(step);
      return elapsed === null ? null : Math.round(elapsed);
    };
    return {
      answer: ms('answer'),
      iceConnected: ms('iceConnected'),
      dtlsConnected: ms('dtlsConnected'),
      videoOpen: ms('videoOpen'),
      firstVideoPacket: ms('firstVideoPacket'),
      burstSent: ms('burstSent'),
      burstPackets: this.burst.packets,
      burstBytes: this.burst.bytes,
      firstLivePacket: ms('firstLivePacket'),
      firstKeyframeRequest: ms('firstKeyframeRequest'),
    };
  }

  /** Counts the first cached burst and logs the start timeline once live packets follow it. */
  private videoSent(out: Buffer): void {
    this.steps.mark('firstVideoPacket');
    if (this.inBurst && this.steps.elapsed('burstSent') === null) {
      this.burst.packets++;
      this.burst.bytes += out.length;
    } else if (!this.inBurst && this.steps.elapsed('firstLivePacket') === null) {
      this.steps.mark('firstLivePacket');
      this.opts.logger.info({ session: this.opts.id, timeline: this.timeline }, 'webrtc session playing');
    }
  }

  private send(sender: Sender, packet: Buffer): void {
    if (!sender.track.isOpen()) return;
    const out = sender.rewriter.rewrite(packet);
    if (!out) return;
    try {
      if (sender.track.sendMessageBinary(out)) {
        this.counters.packetsSent++;
        if (sender === this.video) this.videoSent(out);
      } else this.counters.packetsFailed++;
    } catch {
      this.counters.packetsFailed++;
    }
  }

  /**
   * A keyframe request (PLI/FIR) is served from the relay's cache when it has a keyframe (this
   * peer alone gets the cached group again); only without one does it go to the camera, rate-
   * limited there per camera stream.
   */
  private feedback(message: Buffer): void {
    const fb = readPeerFeedback(message);
    this.counters.nack += fb.nack;
    this.counters.pli += fb.pli;
    this.counters.fir += fb.fir;
    if (fb.pli + fb.fir === 0 || this.ended !== null || !this.detach) return;
    this.steps.mark('firstKeyframeRequest');
    const now = Date.now();
    if (now - this.lastKeyframeServed < this.opts.keyframeIntervalMs) return;
    this.lastKeyframeServed = now;
    if (this.opts.stream.hasCachedKeyframe()) {
      this.counters.keyframesFromCache++;
      this.attach();
    } else if (this.opts.stream.requestKeyframe()) {
      this.counters.keyframesFromCamera++;
    }
  }

  private stateChanged(state: string): void {
    if (this.ended !== null) return;
    if (state === 'connected') {
      this.steps.mark('dtlsConnected');
      this.connected = true;
      if (this.disconnectedTimer) clearTimeout(this.disconnectedTimer);
      this.disconnectedTimer = null;
    } else if (state === 'disconnected') {
      // Consent checks unanswered for a while; libjuice fails the transport later, we may sooner.
      this.disconnectedTimer ??= this.timer(this.opts.connectTimeoutMs, () => this.close('consent_lost'));
    } else if (state === 'failed') {
      this.close(this.connected ? 'consent_lost' : 'ice_failed');
    } else if (state === 'closed') {
      this.close(this.connected ? 'consent_lost' : 'ice_failed');
    }
  }

  private timer(ms: number, fn: () => void): NodeJS.Timeout {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    t.unref();
    this.timers.add(t);
    return t;
  }

  close(reason: SessionEnd): void {
    if (this.ended !== null) return;
    this.ended = reason;
    this.abandonAnswer?.(endedWhileStarting());
    this.abandonAnswer = null;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.detach?.();
    this.detach = null;
    this.stopOpus?.();
    this.stopOpus = null;
    // Closing from inside one of the stack's callbacks would wait on itself: next tick.
    setImmediate(() => {
      try {
        for (const track of this.tracks) track.close();
        this.pc.close();
      } catch (err) {
        this.opts.logger.debug(
          { session: this.opts.id, err: (err as Error).message },
          'webrtc: closing the peer connection failed',
        );
      }
    });
    this.opts.logger.info(
      {
        session: this.opts.id,
        reason,
        packetsSent: this.counters.packetsSent,
        pli: this.counters.pli,
        nack: this.counters.nack,
      },
      'webrtc session ended',
    );
    this.opts.onEnd(this, reason);
  }
}
