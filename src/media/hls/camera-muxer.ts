import type { AudioFrame, VideoAccessUnit } from '../access-unit.js';
import { aacConfigFromFmtp } from '../aac-config.js';
import { AacDepacketizer, aacRtpParameters } from '../aac-depacketizer.js';
import { codecsString } from '../fmp4/codecs.js';
import { DecodeTimeline, type TimedUnit } from '../fmp4/decode-timeline.js';
import { buildInitSegment } from '../fmp4/init-segment.js';
import { aacTrack, h264Track, h265Track, reorderDepthHint, type AacTrack, type H264Track, type H265Track } from '../fmp4/track.js';
import { parseH265SpropParameterSets, parseSpropParameterSets } from '../h26x.js';
import { MediaFormatError } from '../media-error.js';
import { h264ParameterSetsIn, h265ParameterSetsIn } from '../parameter-sets.js';
import type { FanOutReader, TrackStart } from '../relay/fanout.js';
import { createRtpHeader, readRtpHeaderInto } from '../rtp.js';
import { mediaCodecs, parseSdp, type MediaCodec } from '../sdp.js';
import { VideoDepacketizer } from '../video-depacketizer.js';
import { LiveWindow } from './live-window.js';
import { PartAssembler } from './part-assembler.js';

// One camera profile as LL-HLS: a reader of the relay's fan-out (like an RTSP viewer, but in
// process) that depacketises the video (H.264/H.265) and AAC audio, dates the units, cuts parts and
// segments (part-assembler.ts) into a bounded live window. G.711 and other audio that fMP4 here
// does not carry is left out. The init segment is built at the first keyframe, from its in-band
// parameter sets or else the SDP's sprop-*. Work happens as packets arrive; nothing is queued, so
// the reader is never behind (pendingBytes 0).

export interface CameraMuxerOptions {
  /** PART-TARGET, seconds. */
  partTarget: number;
  /** EXT-X-TARGETDURATION, whole seconds (the longest segment; a segment is a GOP). */
  targetDuration: number;
  /** Seconds of complete segments kept (at least three target durations). */
  keepSeconds: number;
  /** Bytes of media kept at most. */
  maxBytes: number;
  wallClock?: () => number;
}

export interface CameraMuxerStats {
  /** Video units dropped while waiting for a keyframe (the start, or after a loss). */
  waitingForKeyframe: number;
  /** Samples longer than PART-TARGET, shortened to it (a gap in the camera's pictures). */
  longSamples: number;
  /** Keyframes whose parameter sets did not make a track. */
  badParameterSets: number;
}

interface VideoPlan {
  codec: MediaCodec;
  encoding: 'H264' | 'H265';
}

/** Complete segments kept at most; the byte and seconds bounds usually come first. */
const MAX_SEGMENTS = 120;

export class CameraMuxer implements FanOutReader {
  readonly window: LiveWindow;
  readonly stats: CameraMuxerStats = { waitingForKeyframe: 0, longSamples: 0, badParameterSets: 0 };
  /** The init segment, once the first keyframe came. */
  init: Buffer | null = null;
  /** RFC 6381 codecs of the tracks (with the init segment). */
  codecs: string[] = [];
  resolution: { width: number; height: number } | null = null;
  /** Why the muxer stopped (the stream was evicted or its input could not be muxed); null while live. */
  ended: string | null = null;
  private readonly header = createRtpHeader();
  private readonly video: VideoPlan;
  private readonly videoDepacketizer: VideoDepacketizer;
  private readonly audioCodec: MediaCodec | null;
  private readonly audioDepacketizer: AacDepacketizer | null = null;
  private audioTrackDef: AacTrack | null = null;
  private assembler: PartAssembler | null = null;
  private videoTimeline: DecodeTimeline<VideoAccessUnit> | null = null;
  private audioTimeline: DecodeTimeline<AudioFrame> | null = null;
  private starts: TrackStart[] = [];
  private afterLoss = false;
  private readonly partTicks: number;
  private readonly listeners = new Set<() => void>();

  /** `sdp`: the relay's SDP of the stream (StreamHandle.sdp). Throws MediaFormatError when it has no H.264/H.265 video. */
  constructor(
    sdp: string,
    private readonly options: CameraMuxerOptions,
  ) {
    const codecs = mediaCodecs(parseSdp(sdp));
    const video = codecs.find((c) => c.media === 'video' && (c.encoding === 'H264' || c.encoding === 'H265'));
    if (!video) throw new MediaFormatError('bad_sample', 'the stream has no H.264 or H.265 video');
    this.video = { codec: video, encoding: video.encoding as 'H264' | 'H265' };
    const donl = video.encoding === 'H265' && Number(video.fmtp.get('sprop-max-don-diff') ?? '0') > 0;
    this.videoDepacketizer = new VideoDepacketizer({ codec: this.video.encoding, donl }, (u) => this.onVideo(u));
    this.audioCodec = null;
    const audio = codecs.find((c) => c.media === 'audio' && c.encoding === 'MPEG4-GENERIC');
    if (audio) {
      try {
        this.audioTrackDef = aacTrack(2, aacConfigFromFmtp(audio.fmtp));
        this.audioDepacketizer = new AacDepacketizer(aacRtpParameters(audio.fmtp), (f) => this.onAudio(f));
        this.audioCodec = audio;
      } catch (err) {
        // An AAC track we cannot read is left out; the video still plays.
        if (!(err instanceof Error)) throw err;
        this.audioTrackDef = null;
      }
    }
    this.partTicks = Math.round(options.partTarget * 90_000);
    this.window = new LiveWindow({ partTarget: options.partTarget, targetDuration: options.targetDuration, maxSegments: MAX_SEGMENTS, maxBytes: options.maxBytes, keepSeconds: options.keepSeconds });
  }

  /** Each track's RTP time at the instant this reader's stream starts (from the fan-out, before attach). */
  setStarts(starts: TrackStart[]): void {
    this.starts = starts;
  }

  /** Calls `listener` after each new part and when the muxer ends; returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get bytes(): number {
    return this.window.stats.bytes;
  }

  /** Media bits per second over the window (the multivariant playlist's BANDWIDTH). */
  bandwidth(): number {
    const playlist = this.window.playlist();
    const seconds = playlist.segments.reduce((sum, s) => sum + s.duration, 0) + playlist.openParts.reduce((sum, p) => sum + p.duration, 0);
    return seconds > 0 ? Math.max(1, Math.ceil((this.window.stats.bytes * 8) / seconds)) : 1;
  }

  // --- FanOutReader ---

  pendingBytes(): number {
    return 0;
  }

  deliver(track: number, packet: Buffer): void {
    if (this.ended !== null || !readRtpHeaderInto(packet, this.header)) return;
    try {
      if (track === this.video.codec.index) this.videoDepacketizer.push(packet, this.header);
      else if (track === this.audioCodec?.index) this.audioDepacketizer?.push(packet, this.header);
    } catch (err) {
      // The window refuses what it cannot list (a part longer than PART-TARGET): players would stall
      // on it, so the muxer ends and the next playlist request starts a fresh one.
      if (err instanceof RangeError || err instanceof MediaFormatError) this.end(`the stream could not be muxed: ${err.message}`);
      else throw err;
    }
  }

  deliverRtcp(): void {
    // The tracks' start instants come from the fan-out (setStarts); sender reports add nothing here.
  }

  evict(reason: string): void {
    this.end(reason);
  }

  end(reason: string): void {
    if (this.ended !== null) return;
    this.ended = reason;
    this.notify();
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private startOf(index: number): number | undefined {
    return this.starts.find((s) => s.track === index)?.rtpTime;
  }

  private onVideo(unit: VideoAccessUnit): void {
    if (unit.afterLoss) this.afterLoss = true;
    if (!unit.keyframe && (this.afterLoss || !this.assembler)) {
      // Pictures after a loss refer to what was lost: wait for the next keyframe.
      this.stats.waitingForKeyframe++;
      return;
    }
    if (unit.keyframe) this.afterLoss = false;
    if (!this.assembler && !this.startTracks(unit)) return;
    const parts = this.assembler?.stats.parts ?? 0;
    this.videoTimeline?.push(unit, unit.rtpTime);
    if ((this.assembler?.stats.parts ?? 0) !== parts) this.notify();
  }

  private onAudio(frame: AudioFrame): void {
    // Before the first keyframe there is no part to put audio in.
    this.audioTimeline?.push(frame, frame.rtpTime);
  }

  /** At the first usable keyframe: the tracks, the init segment, the timelines. */
  private startTracks(keyframe: VideoAccessUnit): boolean {
    let videoTrack: H264Track | H265Track;
    try {
      const fmtp = this.video.codec.fmtp;
      if (this.video.encoding === 'H264') {
        const inBand = h264ParameterSetsIn(keyframe.nalus);
        videoTrack = h264Track(1, inBand.sps.length > 0 && inBand.pps.length > 0 ? inBand : parseSpropParameterSets(fmtp));
      } else {
        const inBand = h265ParameterSetsIn(keyframe.nalus);
        videoTrack = h265Track(1, inBand.vps.length > 0 && inBand.sps.length > 0 && inBand.pps.length > 0 ? inBand : parseH265SpropParameterSets(fmtp));
      }
    } catch (err) {
      if (!(err instanceof MediaFormatError)) throw err;
      this.stats.badParameterSets++;
      return false;
    }
    const audioTrack = this.audioTrackDef;
    this.init = buildInitSegment(audioTrack ? [videoTrack, audioTrack] : [videoTrack]);
    this.codecs = audioTrack ? [codecsString(videoTrack), codecsString(audioTrack)] : [codecsString(videoTrack)];
    this.resolution = { width: videoTrack.width, height: videoTrack.height };
    const assembler = new PartAssembler(this.window, { video: videoTrack, audio: audioTrack }, { partTarget: this.options.partTarget, targetDuration: this.options.targetDuration }, this.options.wallClock ?? Date.now);
    this.assembler = assembler;
    const videoZero = this.startOf(this.video.codec.index);
    this.videoTimeline = new DecodeTimeline<VideoAccessUnit>((t) => assembler.pushVideo(this.boundDuration(t)), {
      initialReorderDepth: reorderDepthHint(videoTrack),
      ...(videoZero !== undefined ? { zeroRtpTime: videoZero } : {}),
    });
    if (audioTrack && this.audioCodec) {
      // Without a known start the audio counts from its first frame after this keyframe.
      const audioZero = videoZero !== undefined ? this.startOf(this.audioCodec.index) : undefined;
      this.audioTimeline = new DecodeTimeline<AudioFrame>((t) => assembler.pushAudio(t), audioZero !== undefined ? { zeroRtpTime: audioZero } : {});
    }
    return true;
  }

  /** A sample longer than a part (pictures missing) is shortened to one: parts never exceed PART-TARGET. */
  private boundDuration(t: TimedUnit<VideoAccessUnit>): TimedUnit<VideoAccessUnit> {
    if (t.duration > this.partTicks) {
      this.stats.longSamples++;
      return { ...t, duration: this.partTicks };
    }
    return t.duration > 0 ? t : { ...t, duration: 1 };
  }
}
