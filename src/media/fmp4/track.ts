import type { AacConfig } from '../aac-config.js';
import { parseH264Sps, type H264ParameterSets, type H264Sps } from '../h26x.js';
import { parseH265Sps, type H265Sps } from '../h265-sps.js';
import type { H265ParameterSets } from '../h26x.js';
import { MediaFormatError } from '../errors.js';

// What the init segment says about a track, built once from the camera's parameter sets (SDP
// sprop-* or the first keyframe's in-band sets) or audio config. Every check on those bytes happens
// here, so that the box writers after it cannot fail on them.

/** Video RTP clocks are 90 kHz, and the track keeps that timescale so RTP deltas carry over exactly. */
export const VIDEO_TIMESCALE = 90_000;

interface TrackBase {
  /** track_ID, from 1. */
  id: number;
  timescale: number;
}

export interface H264Track extends TrackBase {
  kind: 'video';
  codec: 'H264';
  width: number;
  height: number;
  sps: Buffer[];
  pps: Buffer[];
  info: H264Sps;
}

export interface H265Track extends TrackBase {
  kind: 'video';
  codec: 'H265';
  width: number;
  height: number;
  vps: Buffer[];
  sps: Buffer[];
  pps: Buffer[];
  info: H265Sps;
}

export interface AacTrack extends TrackBase {
  kind: 'audio';
  codec: 'AAC';
  config: AacConfig;
}

/** G.711 (RFC 3551 4.5.14): one byte a sample a channel, so the timescale is the sample rate. */
export interface G711Track extends TrackBase {
  kind: 'audio';
  codec: 'G711';
  /** µ-law (PCMU) or A-law (PCMA). */
  law: G711Law;
  sampleRate: number;
  channels: number;
}

export type G711Law = 'mu' | 'a';

export type Fmp4Track = H264Track | H265Track | AacTrack | G711Track;

// avcC/hvcC count parameter sets in small fields and size each in 16 bits.
const MAX_SETS = 31;
const MAX_SET_BYTES = 0xffff;

function checkSets(sets: Buffer[], code: 'bad_sps' | 'bad_pps' | 'bad_vps', name: string): void {
  if (sets.length === 0) throw new MediaFormatError(code, `no ${name}`);
  if (sets.length > MAX_SETS) throw new MediaFormatError(code, `${sets.length} ${name}s`);
  for (const set of sets)
    if (set.length < 2 || set.length > MAX_SET_BYTES)
      throw new MediaFormatError(code, `${name} of ${set.length} bytes`);
}

function checkId(id: number): void {
  if (!Number.isInteger(id) || id < 1 || id >= 0xffffffff) throw new RangeError(`track id ${id}`);
}

/** An H.264 track; a MediaFormatError when the SPS or PPS are missing or the first SPS does not parse. */
export function h264Track(id: number, sets: H264ParameterSets): H264Track {
  checkId(id);
  checkSets(sets.sps, 'bad_sps', 'SPS');
  checkSets(sets.pps, 'bad_pps', 'PPS');
  const first = sets.sps[0] as Buffer;
  const info = parseH264Sps(first);
  if (!info || first.length < 4) throw new MediaFormatError('bad_sps', 'the H.264 SPS does not parse');
  if (sets.pps.some((p) => (p.readUInt8(0) & 0x1f) !== 8))
    throw new MediaFormatError('bad_pps', 'a PPS is not NAL type 8');
  if (info.width > 0xffff || info.height > 0xffff) throw new MediaFormatError('bad_sps', 'picture too large');
  return {
    id,
    timescale: VIDEO_TIMESCALE,
    kind: 'video',
    codec: 'H264',
    width: info.width,
    height: info.height,
    sps: sets.sps,
    pps: sets.pps,
    info,
  };
}

/** An H.265 track; a MediaFormatError when a VPS, SPS or PPS is missing or the first SPS does not parse. */
export function h265Track(id: number, sets: H265ParameterSets): H265Track {
  checkId(id);
  checkSets(sets.vps, 'bad_vps', 'VPS');
  checkSets(sets.sps, 'bad_sps', 'SPS');
  checkSets(sets.pps, 'bad_pps', 'PPS');
  const info = parseH265Sps(sets.sps[0] as Buffer);
  if (!info) throw new MediaFormatError('bad_sps', 'the H.265 SPS does not parse');
  const typeOf = (b: Buffer): number => (b.readUInt8(0) >> 1) & 0x3f;
  if (sets.vps.some((v) => typeOf(v) !== 32)) throw new MediaFormatError('bad_vps', 'a VPS is not NAL type 32');
  if (sets.pps.some((p) => typeOf(p) !== 34)) throw new MediaFormatError('bad_pps', 'a PPS is not NAL type 34');
  if (info.width > 0xffff || info.height > 0xffff) throw new MediaFormatError('bad_sps', 'picture too large');
  return {
    id,
    timescale: VIDEO_TIMESCALE,
    kind: 'video',
    codec: 'H265',
    width: info.width,
    height: info.height,
    vps: sets.vps,
    sps: sets.sps,
    pps: sets.pps,
    info,
  };
}

/** An AAC track at the config's sample rate (the RTP clock rate of mpeg4-generic audio). */
export function aacTrack(id: number, config: AacConfig): AacTrack {
  checkId(id);
  return { id, timescale: config.sampleRate, kind: 'audio', codec: 'AAC', config };
}

// The sample entry's rate is 16.16 fixed point; RFC 3551 4.1 orders channels up to 6.
const MAX_G711_RATE = 0xffff;
const MAX_G711_CHANNELS = 6;

/**
 * A G.711 track at the RTP clock rate (8000 Hz for PCMU/PCMA); a MediaFormatError when the SDP's rate or channel
 * count is one the sample entry (g711-entry.ts) cannot say.
 */
export function g711Track(id: number, law: G711Law, sampleRate: number, channels: number): G711Track {
  checkId(id);
  if (law !== 'mu' && law !== 'a') throw new MediaFormatError('bad_audio_config', `G.711 law ${String(law)}`);
  if (!Number.isInteger(sampleRate) || sampleRate < 1 || sampleRate > MAX_G711_RATE)
    throw new MediaFormatError('bad_audio_config', `G.711 at ${sampleRate} Hz`);
  if (!Number.isInteger(channels) || channels < 1 || channels > MAX_G711_CHANNELS)
    throw new MediaFormatError('bad_audio_config', `G.711 with ${channels} channels`);
  return { id, timescale: sampleRate, kind: 'audio', codec: 'G711', law, sampleRate, channels };
}

/** H.264 profiles that cannot have B-slices: Baseline, and any stream flagged constrained baseline. */
function h264WithoutReordering(track: H264Track): boolean {
  return track.info.profileIdc === 66 || (track.info.constraintFlags & 0x40) !== 0;
}

/**
 * How many pictures the decode timeline should expect to be reordered from the start (see
 * decode-timeline.ts): H.265 says it in the SPS (sps_max_num_reorder_pics); H.264 says it only in
 * an optional VUI field, so profiles that allow B-frames get 2 (x264's B-pyramid), which costs two
 * pictures of latency, small beside an LL-HLS part; the timeline grows it if the stream needs more.
 */
export function reorderDepthHint(track: H264Track | H265Track): number {
  if (track.codec === 'H265') return track.info.maxNumReorderPics;
  return h264WithoutReordering(track) ? 0 : 2;
}
