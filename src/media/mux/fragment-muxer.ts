import type { AudioFrame, VideoAccessUnit } from '../access-unit.js';
import { aacConfigFromFmtp } from '../aac-config.js';
import { AacDepacketizer, aacRtpParameters } from '../aac-depacketizer.js';
import { codecsString } from '../fmp4/codecs.js';
import { DecodeTimeline, type TimedUnit } from '../fmp4/decode-timeline.js';
import { fitG711Frame } from '../fmp4/g711-fit.js';
import { buildInitSegment } from '../fmp4/init-segment.js';
import {
  aacTrack,
  g711Track,
  h264Track,
  h265Track,
  reorderDepthHint,
  type AacTrack,
  type G711Track,
  type H264Track,
  type H265Track,
} from '../fmp4/track.js';
import { G711Depacketizer } from '../g711-depacketizer.js';
import { parseH265SpropParameterSets, parseSpropParameterSets } from '../h26x.js';
import { MediaFormatError } from '../errors.js';
import { h264ParameterSetsIn, h265ParameterSetsIn } from '../parameter-sets.js';
import type { FanOutReader, TrackStart } from '../relay/fanout.js';
import { createRtpHeader, readRtpHeaderInto, type RtpHeader } from '../rtp.js';
import { mediaCodecs, parseSdp, type MediaCodec } from '../sdp.js';
import { VideoDepacketizer } from '../video-depacketizer.js';
import { PartAssembler, type PartSink } from './part-assembler.js';

// One camera profile as fragmented MP4: a reader of the relay's fan-out (like an RTSP viewer, but in
// process) that depacketises the video (H.264/H.265) and AAC audio, dates the units and cuts them
// into fragments (part-assembler.ts) for a sink: LL-HLS's live window, or a footage file. G.711
// audio is carried only when asked for (`g711`): browsers' MSE cannot play it, but the recorder's
// clips go through ffmpeg, which can. Other audio is left out. The init segment is built at the first
// keyframe, from its in-band parameter sets or else the SDP's sprop-*. Work happens as packets
// arrive; nothing is queued, so the reader is never behind (pendingBytes 0).

export interface FragmentMuxerOptions {
  /** Longest part, seconds; a longer sample (pictures missing) is shortened to it. */
  partTarget: number;
  /** Longest segment, seconds (a segment is a GOP, cut inside one that is longer). */
  targetDuration: number;
  /** Longest sample, seconds (default: the part target): a longer one is pictures missing, not a picture that long. */
  maxSampleDuration?: number;
  /**
   * Carry PCMU/PCMA audio as a track ('ulaw'/'alaw'; default false). For output that ffmpeg reads, not a browser;
   * AAC, when the camera offers it too and its config reads, is still the track chosen.
   */
  g711?: boolean;
  wallClock?: () => number;
}

export interface FragmentMuxerStats {
  /** Video units dropped while waiting for a keyframe (the start, or after a loss). */
  waitingForKeyframe: number;
  /** Samples longer than maxSampleDuration, shortened to it (a gap in the camera's pictures). */
  longSamples: number;
  /** Keyframes whose parameter sets did not make a track. */
  badParameterSets: number;
}

/** What the sink is told besides the parts. */
export interface FragmentSink extends PartSink {
  /** The muxer ended (evicted, or its input could not be muxed); no part comes after. */
  ended?(reason: string): void;
}

interface VideoPlan {
  codec: MediaCodec;
  encoding: 'H264' | 'H265';
}

interface AudioPlan {
  codec: MediaCodec;
  track: AacTrack | G711Track;
  depacketizer: { push(packet: Buffer, header: RtpHeader): void };
}

/**
 * Longest believable step between G.711 frames, seconds: a longer one is the camera's clock restarting, not a pause,
 * and the silence that fills a pause (g711-fit.ts) stays bounded.
 */
const G711_MAX_JUMP_S = 10;

/** The audio track for the SDP's codecs: AAC when it reads, else G.711 when asked for; null for none. */
function planAudio(codecs: MediaCodec[], g711: boolean, onFrame: (frame: AudioFrame) => void): AudioPlan | null {
  const aac = codecs.find((c) => c.media === 'audio' && c.encoding === 'MPEG4-GENERIC');
  if (aac) {
    try {
      const track = aacTrack(2, aacConfigFromFmtp(aac.fmtp));
      return { codec: aac, track, depacketizer: new AacDepacketizer(aacRtpParameters(aac.fmtp), onFrame) };
    } catch (err) {
      // An AAC track we cannot read is left out; the video still plays.
      if (!(err instanceof Error)) throw err;
    }
  }
  if (!g711) return null;
  const pcm = codecs.find((c) => c.media === 'audio' && (c.encoding === 'PCMU' || c.encoding === 'PCMA'));
  if (!pcm || pcm.payloadType === null) return null;
  try {
    const track = g711Track(2, pcm.encoding === 'PCMU' ? 'mu' : 'a', pcm.clockRate ?? 8000, pcm.channels ?? 1);
    const params = { payloadType: pcm.payloadType, channels: track.channels };
    return { codec: pcm, track, depacketizer: new G711Depacketizer(params, onFrame) };
  } catch (err) {
    // A rate or channel count no sample entry can say: the video still plays.
    if (!(err instanceof MediaFormatError)) throw err;
    return null;
  }
}

export class FragmentMuxer implements FanOutReader {
  readonly stats: FragmentMuxerStats = { waitingForKeyframe: 0, longSamples: 0, badParameterSets: 0 };
  /** The init segment, once the first keyframe came. */
  init: Buffer | null = null;
  /** RFC 6381 codecs of the tracks (with the init segment). */
  codecs: string[] = [];
  resolution: { width: number; height: number } | null = null;
  /** Why the muxer stopped; null while live. */
  ended: string | null = null;
  private readonly header = createRtpHeader();
  private readonly video: VideoPlan;
  private readonly videoDepacketizer: VideoDepacketizer;
  private readonly audio: AudioPlan | null;
  private assembler: PartAssembler | null = null;
  private videoTimeline: DecodeTimeline<VideoAccessUnit> | null = null;
  private audioTimeline: DecodeTimeline<AudioFrame> | null = null;
  private starts: TrackStart[] = [];
  private afterLoss = false;
  private readonly maxSampleTicks: number;
  /** When each picture waiting in the timeline arrived (wall clock, ms): parts are dated from them (PartAssembler). */
  private readonly arrivals = new WeakMap<VideoAccessUnit, number>();

  /** The audio track it writes (from the SDP, fixed for its life): AAC, G.711 (when asked for), or none. */
  get audioCodec(): 'AAC' | 'G711' | null {
    return this.audio?.track.codec ?? null;
  }

  /**
   * `sdp`: the relay's SDP of the stream (StreamHandle.sdp). Throws MediaFormatError when it has no H.264/H.265 video.
   */
  constructor(
    sdp: string,
    private readonly options: FragmentMuxerOptions,
    private readonly sink: FragmentSink,
  ) {
    const codecs = mediaCodecs(parseSdp(sdp));
    const video = codecs.find((c) => c.media === 'video' && (c.encoding === 'H264' || c.encoding === 'H265'));
    if (!video) throw new MediaFormatError('bad_sample', 'the stream has no H.264 or H.265 video');
    this.video = { codec: video, encoding: video.encoding as 'H264' | 'H265' };
    const donl = video.encoding === 'H265' && Number(video.fmtp.get('sprop-max-don-diff') ?? '0') > 0;
    this.videoDepacketizer = new VideoDepacketizer({ codec: this.video.encoding, donl }, (u) => this.onVideo(u));
    this.audio = planAudio(codecs, options.g711 ?? false, (f) => this.onAudio(f));
    this.maxSampleTicks = Math.round(
      Math.min(options.maxSampleDuration ?? options.partTarget, options.partTarget) * 90_000,
    );
  }

  /** Each track's RTP time at the instant this reader's stream starts (from the fan-out, before attach). */
  setStarts(starts: TrackStart[]): void {
    this.starts = starts;
  }

  // --- FanOutReader ---

  pendingBytes(): number {
    return 0;
  }

  deliver(track: number, packet: Buffer): void {
    if (this.ended !== null || !readRtpHeaderInto(packet, this.header)) return;
    try {
      if (track === this.video.codec.index) this.videoDepacketizer.push(packet, this.header);
      else if (track === this.audio?.codec.index) this.audio.depacketizer.push(packet, this.header);
    } catch (err) {
      // A sink refuses what it cannot keep (LL-HLS: a part longer than PART-TARGET, which players
      // would stall on): the muxer ends, and its owner starts a fresh one.
      if (err instanceof RangeError || err instanceof MediaFormatError)
        this.end(`the stream could not be muxed: ${err.message}`);
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
    this.sink.ended?.(reason);
  }

  /**
   * Closes the part being filled with the pictures dated so far (the newest one waits for the next to
   * know its length); the stream goes on: PartAssembler.cut.
   */
  cut(): void {
    this.assembler?.cut();
  }

  /**
   * The end of the stream for this reader: hands on the pictures (and audio) the timelines still hold
   * and closes the part being filled, so the last group of pictures is kept up to its last picture.
   */
  flush(): void {
    this.videoTimeline?.flush();
    this.audioTimeline?.flush();
    this.assembler?.flush();
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
    this.arrivals.set(unit, (this.options.wallClock ?? Date.now)());
    this.videoTimeline?.push(unit, unit.rtpTime);
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
        videoTrack = h264Track(
          1,
          inBand.sps.length > 0 && inBand.pps.length > 0 ? inBand : parseSpropParameterSets(fmtp),
        );
      } else {
        const inBand = h265ParameterSetsIn(keyframe.nalus);
        videoTrack = h265Track(
          1,
          inBand.vps.length > 0 && inBand.sps.length > 0 && inBand.pps.length > 0
            ? inBand
            : parseH265SpropParameterSets(fmtp),
        );
      }
    } catch (err) {
      if (!(err instanceof MediaFormatError)) throw err;
      this.stats.badParameterSets++;
      return false;
    }
    const audioTrack = this.audio?.track ?? null;
    const tracks = audioTrack ? [videoTrack, audioTrack] : [videoTrack];
    this.init = buildInitSegment(tracks);
    this.codecs = tracks.map(codecsString);
    this.resolution = { width: videoTrack.width, height: videoTrack.height };
    const assembler = new PartAssembler(
      this.sink,
      { video: videoTrack, audio: audioTrack },
      { partTarget: this.options.partTarget, targetDuration: this.options.targetDuration },
      this.options.wallClock ?? Date.now,
    );
    this.assembler = assembler;
    const videoZero = this.startOf(this.video.codec.index);
    this.videoTimeline = new DecodeTimeline<VideoAccessUnit>(
      (t) => assembler.pushVideo(this.boundDuration(t), this.arrivals.get(t.unit)),
      {
        initialReorderDepth: reorderDepthHint(videoTrack),
        ...(videoZero !== undefined ? { zeroRtpTime: videoZero } : {}),
      },
    );
    if (this.audio) {
      // Without a known start the audio counts from its first frame after this keyframe.
      const audioZero = videoZero !== undefined ? this.startOf(this.audio.codec.index) : undefined;
      const zero = audioZero !== undefined ? { zeroRtpTime: audioZero } : {};
      const track = this.audio.track;
      this.audioTimeline =
        track.codec === 'G711'
          ? new DecodeTimeline<AudioFrame>((t) => assembler.pushAudio(fitG711Frame(t, track)), {
              ...zero,
              maxJump: G711_MAX_JUMP_S * track.sampleRate,
            })
          : new DecodeTimeline<AudioFrame>((t) => assembler.pushAudio(t), zero);
    }
    return true;
  }

  /**
   * A sample longer than maxSampleDuration (pictures missing) is shortened to it: parts never exceed the part target.
   */
  private boundDuration(t: TimedUnit<VideoAccessUnit>): TimedUnit<VideoAccessUnit> {
    if (t.duration > this.maxSampleTicks) {
      this.stats.longSamples++;
      return { ...t, duration: this.maxSampleTicks };
    }
    return t.duration > 0 ? t : { ...t, duration: 1 };
  }
}
