import { parseH265SpropParameterSets, parseSpropParameterSets } from '../h26x.js';
import { h264ParameterSetsIn, h265ParameterSetsIn } from '../parameter-sets.js';
import type { VideoCodec } from '../video-depacketizer.js';

// An access unit as an Annex B byte stream (ITU-T H.264/H.265 Annex B), what `ffmpeg -f h264|hevc`
// reads: each NAL unit after a four-byte start code. A keyframe a decoder starts on needs its
// parameter sets first; cameras send them in band, in the SDP's sprop-*, or both.

const START_CODE = Buffer.from([0, 0, 0, 1]);

export function annexB(nalus: readonly Buffer[]): Buffer {
  const parts: Buffer[] = [];
  for (const nal of nalus) parts.push(START_CODE, nal);
  return Buffer.concat(parts);
}

/**
 * The keyframe's NAL units, preceded by the SDP's parameter sets when the picture brought none of
 * its own (in-band sets win: they are what the encoder used for this picture). Null when neither
 * has a complete set (SPS and PPS; for H.265 also VPS).
 */
export function withParameterSets(
  codec: VideoCodec,
  nalus: readonly Buffer[],
  fmtp: ReadonlyMap<string, string>,
): Buffer[] | null {
  if (codec === 'H264') {
    const inBand = h264ParameterSetsIn(nalus);
    if (inBand.sps.length > 0 && inBand.pps.length > 0) return [...nalus];
    const sets = parseSpropParameterSets(fmtp);
    if (sets.sps.length === 0 || sets.pps.length === 0) return null;
    return [...sets.sps, ...sets.pps, ...nalus.filter((n) => !isH264ParameterSet(n))];
  }
  const inBand = h265ParameterSetsIn(nalus);
  if (inBand.vps.length > 0 && inBand.sps.length > 0 && inBand.pps.length > 0) return [...nalus];
  const sets = parseH265SpropParameterSets(fmtp);
  if (sets.vps.length === 0 || sets.sps.length === 0 || sets.pps.length === 0) return null;
  return [...sets.vps, ...sets.sps, ...sets.pps, ...nalus.filter((n) => !isH265ParameterSet(n))];
}

function isH264ParameterSet(nal: Buffer): boolean {
  const type = (nal[0] ?? 0) & 0x1f;
  return type === 7 || type === 8;
}

function isH265ParameterSet(nal: Buffer): boolean {
  const type = h265Type(nal);
  return type >= 32 && type <= 34;
}

/**
 * Whether the access unit is one picture that a decoder hands on as soon as it has it, so that a
 * long-lived decoder gives exactly one JPEG for it (live-decoder.ts): parameter sets and SEI
 * first, then the slices of one frame (only the first begins a picture: first_mb_in_slice 0, or
 * first_slice_segment_in_pic_flag), nothing after them that would begin another access unit; for
 * H.264 frames only (two fields would be two pictures to the parser); for H.265 no picture
 * reordering declared (the decoder would hold the picture back). H.264's reordering lives in its
 * VUI, not read here: such a decoder does not answer in time and the pool stops using it.
 */
export function decodesAlone(
  codec: VideoCodec,
  nalus: readonly Buffer[],
  opts: { frameMbsOnly: boolean; reorder: number },
): boolean {
  if (!opts.frameMbsOnly || opts.reorder > 0) return false;
  let slices = 0;
  for (const nal of nalus) {
    const vcl = codec === 'H264' ? isH264Slice(nal) : isH265Slice(nal);
    if (vcl) {
      const begins = ((nal[codec === 'H264' ? 1 : 2] ?? 0) & 0x80) !== 0;
      if (begins !== (slices === 0)) return false;
      slices++;
    } else if (slices > 0 && !(codec === 'H265' && h265Type(nal) === H265_SUFFIX_SEI)) return false;
  }
  return slices > 0;
}

const H265_SUFFIX_SEI = 40;

function isH264Slice(nal: Buffer): boolean {
  const type = (nal[0] ?? 0) & 0x1f;
  return type === 1 || type === 5;
}

const h265Type = (nal: Buffer): number => ((nal[0] ?? 0) >> 1) & 0x3f;

function isH265Slice(nal: Buffer): boolean {
  return h265Type(nal) < 32;
}
