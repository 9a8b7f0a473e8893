import { randomBytes } from 'node:crypto';
import type { BaseLogger } from 'pino';
import type { StreamProfile } from '../../domain/types.js';
import type { StreamHandle } from '../relay/streams.js';
import { parseSdp } from '../sdp.js';
import { matchCodecs, type CodecChoice } from './codec-match.js';
import { endedWhileStarting, WhepRefusedError } from './errors.js';
import { readWebRtcOffer } from './offer.js';
import { WebRtcSession, type SessionEnd, type WebRtcSessionOptions } from './session.js';

// Every WHEP session of the gateway: bounded in total (webrtc.max_sessions) and per client address
// (a flood of POSTs from one address gets 429 long before it can use up the total), each ended by
// its own rules (session.ts) or all at shutdown. Counted for /metrics.

export interface WebRtcSessionsOptions {
  /** The relay's shared camera stream of a device profile (opens the camera session if needed). */
  acquire: (deviceId: string, profile: StreamProfile) => Promise<StreamHandle>;
  maxSessions: number;
  maxSessionsPerAddress: number;
  bindAddress: string | null;
  iceServers: string[];
  portRange: { begin: number; end: number } | null;
  connectTimeoutS: number;
  nackBufferPackets: number;
  /** The AAC → Opus transcoders (webrtc.audio_transcode); null: off, AAC is dropped. */
  audioTranscode: OpusTranscoders | null;
  logger: BaseLogger;
}

/** What a session needs of the AAC → Opus transcoders (audio-transcoders.ts). */
export interface OpusTranscoders {
  /** Room for this device profile's transcoder (it runs, or fewer than the most run); counts a refusal. */
  available(deviceId: string, profile: StreamProfile): boolean;
  subscribe(deviceId: string, profile: StreamProfile, listener: (packet: Buffer) => void): (() => void) | null;
  readonly limit: number;
}

export interface StartRequest {
  deviceId: string;
  profile: StreamProfile;
  /** The ticket the session was started with: its Location carries it, DELETE must name it. */
  ticket: string;
  offerSdp: string;
  address: string;
  /** When the session must end at the latest (ms since the epoch): start + rtsp.max_session_s. */
  endsAt: number;
  /** performance.now() when the POST was received (the session's start timeline counts from it). */
  receivedAt?: number;
}

export interface WebRtcStats {
  sessions: number;
  connected: number;
  starting: number;
  refused: Record<'capacity' | 'per_address_limit' | 'bad_offer' | 'no_common_codec' | 'stream_unavailable', number>;
  ended: Record<SessionEnd, number>;
  packetsSent: number;
  pli: number;
  nack: number;
  keyframesFromCache: number;
  keyframesFromCamera: number;
}

interface Entry {
  session: WebRtcSession;
  ticket: string;
  address: string;
  deviceId: string;
}

export class WebRtcSessions {
  private readonly sessions = new Map<string, Entry>();
  private readonly perAddress = new Map<string, number>();
  private starting = 0;
  private closing = false;
  private readonly totals = { packetsSent: 0, pli: 0, nack: 0, keyframesFromCache: 0, keyframesFromCamera: 0 };
  private readonly refused: WebRtcStats['refused'] = {
    capacity: 0,
    per_address_limit: 0,
    bad_offer: 0,
    no_common_codec: 0,
    stream_unavailable: 0,
  };
  private readonly ended: WebRtcStats['ended'] = {
    deleted: 0,
    ice_timeout: 0,
    ice_failed: 0,
    consent_lost: 0,
    max_lifetime: 0,
    evicted: 0,
    shutdown: 0,
  };

  constructor(private readonly opts: WebRtcSessionsOptions) {}

  /** Starts a session; resolves with its id and the SDP answer. Throws the errors the API maps. */
  async start(req: StartRequest): Promise<{ id: string; answer: string }> {
    if (this.closing || this.sessions.size + this.starting >= this.opts.maxSessions) {
      this.refused.capacity++;
      throw new WhepRefusedError(
        'capacity',
        `the gateway serves at most ${this.opts.maxSessions} WebRTC sessions (webrtc.max_sessions)`,
        30,
      );
    }
    const held = this.perAddress.get(req.address) ?? 0;
    if (held >= this.opts.maxSessionsPerAddress) {
      this.refused.per_address_limit++;
      throw new WhepRefusedError(
        'per_address_limit',
        `at most ${this.opts.maxSessionsPerAddress} WebRTC sessions per client address (webrtc.max_sessions_per_address)`,
        10,
      );
    }
    this.starting++;
    this.perAddress.set(req.address, held + 1);
    let started = false;
    try {
      const result = await this.open(req);
      started = true;
      return result;
    } finally {
      this.starting--;
      if (!started) this.release(req.address);
    }
  }

  private async open(req: StartRequest): Promise<{ id: string; answer: string }> {
    let offer;
    try {
      offer = readWebRtcOffer(req.offerSdp);
    } catch (err) {
      this.refused.bad_offer++;
      throw err;
    }
    let stream: StreamHandle;
    try {
      stream = await this.opts.acquire(req.deviceId, req.profile);
    } catch (err) {
      this.refused.stream_unavailable++;
      throw err;
    }
    let choice: CodecChoice;
    const transcoders = this.opts.audioTranscode;
    try {
      choice = matchCodecs(parseSdp(stream.sdp), offer, { audioTranscode: transcoders !== null });
    } catch (err) {
      this.refused.no_common_codec++;
      throw err;
    }
    if (choice.audio?.transcoded && !transcoders?.available(req.deviceId, req.profile)) {
      choice = {
        ...choice,
        audio: null,
        audioDropped: `AAC needs a transcoder to Opus and ${transcoders?.limit ?? 0} run already (webrtc.max_audio_transcoders)`,
      };
    }
    if (choice.audioDropped)
      this.opts.logger.info(
        { device: req.deviceId, reason: choice.audioDropped },
        "webrtc: the camera's audio is not sent",
      );
    if (choice.video.profileMatch === 'assumed')
      this.opts.logger.info(
        { device: req.deviceId, fmtp: choice.video.fmtp },
        "webrtc: the browser offers no decoder profile covering the camera's; sending it anyway",
      );
    const id = randomBytes(16).toString('base64url');
    const sessionOpts: WebRtcSessionOptions = {
      id,
      offer,
      offerSdp: req.offerSdp,
      choice,
      stream,
      bindAddress: this.opts.bindAddress,
      iceServers: this.opts.iceServers,
      portRange: this.opts.portRange,
      connectTimeoutMs: this.opts.connectTimeoutS * 1000,
      maxLifetimeMs: Math.max(0, req.endsAt - Date.now()),
      nackBufferPackets: this.opts.nackBufferPackets,
      keyframeIntervalMs: 1000,
      logger: this.opts.logger,
      ...(req.receivedAt !== undefined ? { receivedAt: req.receivedAt } : {}),
      ...(transcoders
        ? { opus: (listener: (packet: Buffer) => void) => transcoders.subscribe(req.deviceId, req.profile, listener) }
        : {}),
      onEnd: (session, reason) => this.ended_(id, session, reason),
    };
    const { session, answer } = await WebRtcSession.open(sessionOpts);
    if (session.endReason !== null) throw endedWhileStarting();
    this.sessions.set(id, { session, ticket: req.ticket, address: req.address, deviceId: req.deviceId });
    return { id, answer };
  }

  private ended_(id: string, session: WebRtcSession, reason: SessionEnd): void {
    this.ended[reason]++;
    const c = session.counters;
    this.totals.packetsSent += c.packetsSent;
    this.totals.pli += c.pli + c.fir;
    this.totals.nack += c.nack;
    this.totals.keyframesFromCache += c.keyframesFromCache;
    this.totals.keyframesFromCamera += c.keyframesFromCamera;
    const entry = this.sessions.get(id);
    if (entry?.session !== session) return;
    this.sessions.delete(id);
    this.release(entry.address);
  }

  private release(address: string): void {
    const left = (this.perAddress.get(address) ?? 1) - 1;
    if (left <= 0) this.perAddress.delete(address);
    else this.perAddress.set(address, left);
  }

  /** Ends a session by its id and ticket (DELETE on its Location); false when there is none. */
  end(id: string, ticket: string): boolean {
    const entry = this.sessions.get(id);
    if (!entry || entry.ticket !== ticket) return false;
    entry.session.close('deleted');
    return true;
  }

  /** Sessions showing the device's streams. */
  viewersOf(deviceId: string): number {
    let n = 0;
    for (const entry of this.sessions.values()) if (entry.deviceId === deviceId) n++;
    return n;
  }

  has(id: string, ticket: string): boolean {
    return this.sessions.get(id)?.ticket === ticket;
  }

  stats(): WebRtcStats {
    const live = { packetsSent: 0, pli: 0, nack: 0, keyframesFromCache: 0, keyframesFromCamera: 0 };
    let connected = 0;
    for (const { session } of this.sessions.values()) {
      const c = session.counters;
      live.packetsSent += c.packetsSent;
      live.pli += c.pli + c.fir;
      live.nack += c.nack;
      live.keyframesFromCache += c.keyframesFromCache;
      live.keyframesFromCamera += c.keyframesFromCamera;
      if (session.isConnected) connected++;
    }
    return {
      sessions: this.sessions.size,
      connected,
      starting: this.starting,
      refused: { ...this.refused },
      ended: { ...this.ended },
      packetsSent: this.totals.packetsSent + live.packetsSent,
      pli: this.totals.pli + live.pli,
      nack: this.totals.nack + live.nack,
      keyframesFromCache: this.totals.keyframesFromCache + live.keyframesFromCache,
      keyframesFromCamera: this.totals.keyframesFromCamera + live.keyframesFromCamera,
    };
  }

  close(): void {
    this.closing = true;
    for (const { session } of [...this.sessions.values()]) session.close('shutdown');
  }
}
