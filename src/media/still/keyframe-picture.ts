import { createHash } from 'node:crypto';
import type { VideoAccessUnit } from '../access-unit.js';
import { parseH264Sps } from '../h26x.js';
import { parseH265Sps } from '../h265-sps.js';
import { createRtpHeader, readRtpHeaderInto } from '../rtp.js';
import { mediaCodecs, parseSdp } from '../sdp.js';
import { SdpError } from '../errors.js';
import { VideoDepacketizer, type VideoCodec } from '../video-depacketizer.js';
import { annexB, decodesAlone, withParameterSets } from './annex-b.js';
import { StillError } from './errors.js';

// The relay's cached keyframe as one Annex B picture for a decoder: RTP packets (as the fan-out
// keeps them) depacketised (FU-A/STAP-A, H.265 FU/AP), the first complete keyframe access unit
// taken, its parameter sets completed from the SDP's sprop-* if it brought none. Pure; anything
// wrong with the packets is a StillError, never another exception.

export interface VideoTrackPlan {
  /** Index of the video track in the SDP (the fan-out's track numbers). */
  track: number;
  codec: VideoCodec;
  /** H.265 with sprop-max-don-diff > 0 (RFC 7798 4.4). */
  donl: boolean;
  fmtp: ReadonlyMap<string, string>;
}

/** The H.264/H.265 track of a stream's SDP (the relay's StreamHandle.sdp). */
export function videoPlanOf(sdp: string): VideoTrackPlan {
  let codecs;
  try {
    codecs = mediaCodecs(parseSdp(sdp));
  } catch (err) {
    if (err instanceof SdpError) throw new StillError('no_video', `the stream's SDP cannot be read: ${err.message}`);
    throw err;
  }
  const video = codecs.find((c) => c.media === 'video' && (c.encoding === 'H264' || c.encoding === 'H265'));
  if (!video) throw new StillError('no_video', 'the stream has no H.264 or H.265 video');
  const codec: VideoCodec = video.encoding === 'H265' ? 'H265' : 'H264';
  return {
    track: video.index,
    codec,
    donl: codec === 'H265' && Number(video.fmtp.get('sprop-max-don-diff') ?? '0') > 0,
    fmtp: video.fmtp,
  };
}

export interface CachedPacket {
  track: number;
  packet: Buffer;
}

/** One keyframe picture, ready for `ffmpeg -f h264|hevc`. */
export interface KeyframePicture {
  codec: VideoCodec;
  annexB: Buffer;
  /** Its size in pixels from its SPS; null when the SPS does not say (a decoder may still manage). */
  width: number | null;
  height: number | null;
  /** One picture a long-lived decoder hands on at once (annex-b.ts decodesAlone). */
  standalone: boolean;
  /**
   * A digest of its SPS: keyframes with the same one decode to pictures of one size, pixel format
   * and range. One long-lived decoder takes only those: ffmpeg 5.1 rebuilds its filters when the
   * format changes, and after a few such changes drops a picture or fails on the JPEG's timestamps.
   */
  sps: string;
}

function describe(codec: VideoCodec, nalus: readonly Buffer[]): Omit<KeyframePicture, 'codec' | 'annexB'> {
  for (const nal of nalus) {
    const sps = codec === 'H264' ? parseH264Sps(nal) : parseH265Sps(nal);
    if (!sps) continue;
    const shape =
      'frameMbsOnly' in sps
        ? { frameMbsOnly: sps.frameMbsOnly, reorder: 0 }
        : { frameMbsOnly: true, reorder: sps.maxNumReorderPics };
    return {
      width: sps.width,
      height: sps.height,
      standalone: decodesAlone(codec, nalus, shape),
      sps: createHash('sha256').update(nal).digest('base64url').slice(0, 16),
    };
  }
  return { width: null, height: null, standalone: false, sps: '' };
}

/** The first complete keyframe among `packets` (in arrival order) as Annex B. */
export function keyframePicture(plan: VideoTrackPlan, packets: Iterable<CachedPacket>): KeyframePicture {
  const first: { keyframe: VideoAccessUnit | null } = { keyframe: null };
  const depacketizer = new VideoDepacketizer({ codec: plan.codec, donl: plan.donl }, (unit) => {
    if (first.keyframe === null && unit.keyframe) first.keyframe = unit;
  });
  const header = createRtpHeader();
  for (const { track, packet } of packets) {
    if (track !== plan.track || !readRtpHeaderInto(packet, header)) continue;
    depacketizer.push(packet, header);
    if (first.keyframe) break;
  }
  const found = first.keyframe;
  if (!found) throw new StillError('no_keyframe', 'no complete keyframe among the cached packets');
  const nalus = withParameterSets(plan.codec, found.nalus, plan.fmtp);
  if (!nalus)
    throw new StillError(
      'no_parameter_sets',
      `the keyframe has no ${plan.codec === 'H264' ? 'SPS/PPS' : 'VPS/SPS/PPS'} in band and the SDP none either`,
    );
  return { codec: plan.codec, annexB: annexB(nalus), ...describe(plan.codec, nalus) };
}
