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
export function withParameterSets(codec: VideoCodec, nalus: readonly Buffer[], fmtp: ReadonlyMap<string, string>): Buffer[] | null {
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
  const type = ((nal[0] ?? 0) >> 1) & 0x3f;
  return type >= 32 && type <= 34;
}
