import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import type { BaseLogger } from 'pino';
import { backoffMs } from '../../domain/backoff.js';
import type { StreamProfile } from '../../domain/types.js';
import { RateLimitedLines } from '../recorder/process.js';
import { opusTranscodeArgs } from './opus-args.js';

// webrtc.audio_transcode: AAC is not a WebRTC codec, so one ffmpeg per camera profile turns the
// camera's AAC into Opus for every WebRTC viewer of that profile that took audio. It reads through
// the relay (a loopback recorder ticket: the camera keeps its one session) and sends Opus RTP to a
// UDP socket of ours on loopback; each packet goes to every subscribed session, which rewrites it
// for its peer. It runs while at least one session is subscribed and is stopped when the last one
// leaves. The number running is bounded (maxTranscoders): beyond it new sessions get video only.
// A dying ffmpeg is restarted with backoff; the video never waits for it (it is another process,
// and its packets arrive on their own socket).

export type OpusListener = (packet: Buffer) => void;

export interface AudioTranscodersOptions {
  ffmpegPath: string;
  /** A fresh loopback relay URL with a recorder ticket for this device profile. */
  inputUrl: (deviceId: string, profile: StreamProfile) => string;
  maxTranscoders: number;
  /** Opus bit rate, bit/s. */
  bitrate: number;
  logger: BaseLogger;
  /** Longest wait before a restart (default 10 s). */
  maxBackoffMs?: number;
  random?: () => number;
}

export interface AudioTranscodersStats {
  running: number;
  /** Sessions receiving transcoded audio. */
  listeners: number;
  packets: number;
  restarts: number;
  /** Sessions that wanted audio while maxTranscoders were running (they got video only). */
  refused: number;
}

const OPUS_PAYLOAD_TYPE = 111;
const READ_TIMEOUT_S = 5;

/** One camera profile's ffmpeg and the sessions it feeds. */
class Transcoder {
  readonly listeners = new Set<OpusListener>();
  child: ChildProcess | null = null;
  private socket: Socket | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private attempt = 0;
  /** Where ffmpeg sends from, learnt from its first packet; anything else on the port is ignored. */
  private source: string | null = null;
  private stopped = false;
  packets = 0;
  restarts = 0;

  constructor(
    private readonly key: string,
    private readonly url: () => string,
    private readonly opts: AudioTranscodersOptions,
  ) {}

  async start(): Promise<void> {
    const socket = createSocket('udp4');
    this.socket = socket;
    socket.on('message', (packet, from) => this.received(packet, from));
    socket.on('error', (err) =>
      this.opts.logger.warn({ stream: this.key, err: err.message }, 'audio transcoder: socket error'),
    );
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, '127.0.0.1', () => {
        socket.off('error', reject);
        resolve();
      });
    });
    if (!this.stopped) this.spawn();
  }

  private received(packet: Buffer, from: RemoteInfo): void {
    // RTP version 2, and not RTCP (packet types 200-204 where RTP has marker + payload type).
    if (packet.length < 12 || (packet[0] as number) >> 6 !== 2) return;
    const type = packet[1] as number;
    if (type >= 200 && type <= 204) return;
    const source = `${from.address}:${from.port}`;
    if (this.source === null) this.source = source;
    else if (source !== this.source) return;
    this.packets++;
    this.attempt = 0;
    for (const listener of this.listeners) listener(packet);
  }

  private spawn(): void {
    const socket = this.socket;
    if (!socket || this.stopped) return;
    const args = opusTranscodeArgs({
      inputUrl: this.url(),
      port: socket.address().port,
      payloadType: OPUS_PAYLOAD_TYPE,
      bitrate: this.opts.bitrate,
      readTimeoutS: READ_TIMEOUT_S,
    });
    const child = spawn(this.opts.ffmpegPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    // A new ffmpeg sends from a new port.
    this.source = null;
    const stderr = new RateLimitedLines(this.opts.logger, 'audio transcoder ffmpeg says');
    child.stderr?.on('data', (d: Buffer) => stderr.push(d));
    child.once('error', (err) =>
      this.opts.logger.error({ stream: this.key, err: err.message }, 'cannot run ffmpeg for the audio transcoder'),
    );
    child.once('close', (code, signal) => {
      if (this.child !== child) return;
      this.child = null;
      if (this.stopped) return;
      this.restarts++;
      const wait = Math.max(
        500,
        backoffMs(this.attempt++, this.opts.maxBackoffMs ?? 10_000, this.opts.random ?? Math.random),
      );
      this.opts.logger.warn(
        { stream: this.key, code, signal, retryInMs: wait },
        'audio transcoder ffmpeg ended; restarting',
      );
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        this.spawn();
      }, wait);
      this.retryTimer.unref();
    });
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.child?.kill('SIGTERM');
    this.child = null;
    this.socket?.close();
    this.socket = null;
  }
}

export class AudioTranscoders {
  private readonly running = new Map<string, Transcoder>();
  /** Packets and restarts of transcoders already stopped, so the totals only grow. */
  private readonly past = { packets: 0, restarts: 0 };
  private refused = 0;
  private closed = false;

  constructor(private readonly opts: AudioTranscodersOptions) {}

  get limit(): number {
    return this.opts.maxTranscoders;
  }

  /** Whether a session of this device profile can have Opus now: its transcoder runs, or there is room for one. */
  available(deviceId: string, profile: StreamProfile): boolean {
    if (this.closed) return false;
    if (this.running.has(`${deviceId}/${profile}`) || this.running.size < this.opts.maxTranscoders) return true;
    this.refused++;
    return false;
  }

  /**
   * Opus packets of this device profile to `listener` until the returned function is called (the
   * transcoder starts with its first listener, stops with its last); null when maxTranscoders run.
   */
  subscribe(deviceId: string, profile: StreamProfile, listener: OpusListener): (() => void) | null {
    const key = `${deviceId}/${profile}`;
    let transcoder = this.running.get(key);
    if (!transcoder) {
      if (this.closed || this.running.size >= this.opts.maxTranscoders) {
        this.refused++;
        return null;
      }
      const started = new Transcoder(key, () => this.opts.inputUrl(deviceId, profile), this.opts);
      transcoder = started;
      this.running.set(key, started);
      started.start().catch((err: Error) => {
        this.opts.logger.error({ stream: key, err: err.message }, 'audio transcoder could not start');
        this.stop(key, started);
      });
      this.opts.logger.info({ stream: key }, 'audio transcoder started');
    }
    const own = transcoder;
    own.listeners.add(listener);
    return () => {
      if (!own.listeners.delete(listener) || own.listeners.size > 0) return;
      this.stop(key, own);
    };
  }

  private stop(key: string, transcoder: Transcoder): void {
    transcoder.stop();
    if (this.running.get(key) !== transcoder) return;
    this.running.delete(key);
    this.past.packets += transcoder.packets;
    this.past.restarts += transcoder.restarts;
    this.opts.logger.info(
      { stream: key, packets: transcoder.packets, restarts: transcoder.restarts },
      'audio transcoder stopped',
    );
  }

  stats(): AudioTranscodersStats {
    const now = {
      running: this.running.size,
      listeners: 0,
      packets: this.past.packets,
      restarts: this.past.restarts,
      refused: this.refused,
    };
    for (const t of this.running.values()) {
      now.listeners += t.listeners.size;
      now.packets += t.packets;
      now.restarts += t.restarts;
    }
    return now;
  }

  close(): void {
    this.closed = true;
    for (const [key, t] of [...this.running]) this.stop(key, t);
  }
}
