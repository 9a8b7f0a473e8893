import { BitReader, unescapeRbsp } from './bitstream.js';
import { BitstreamEndError } from './errors.js';

// H.264 (RFC 6184) and H.265 (RFC 7798) RTP payloads: where a new viewer can start, and what the
// camera's parameter sets say. The keyframe tests run per packet, so they read bytes in place and
// never allocate; every read stays inside [offset, offset + length).
//
// "Starts a keyframe" is a property of one packet: it carries the start of a parameter set
// (H.264 SPS; H.265 VPS or SPS) or of the first slice of a random-access picture (H.264 IDR with
// first_mb_in_slice = 0; H.265 IRAP with first_slice_segment_in_pic_flag). Cameras send the
// parameter sets right before the picture in the same access unit, so one keyframe access unit
// usually has two such packets (STAP-A with SPS/PPS, then the IDR's first fragment). A GOP cache
// starts a new group at the first one whose RTP timestamp differs from the group it is filling.

const H264_IDR = 5;
const H264_SPS = 7;
const H264_PPS = 8;
const H264_STAP_A = 24;
const H264_FU_A = 28;

const H265_IRAP_FIRST = 16; // BLA_W_LP
const H265_IRAP_LAST = 21; // CRA_NUT; 22 and 23 are reserved IRAP types no encoder emits
const H265_VPS = 32;
const H265_SPS = 33;
const H265_PPS = 34;
const H265_AP = 48;
const H265_FU = 49;

function validRange(buf: Buffer, offset: number, length: number): boolean {
  return (
    Number.isInteger(offset) && Number.isInteger(length) && offset >= 0 && length >= 0 && offset + length <= buf.length
  );
}

/** The type in the NAL unit header at `offset` (0–31; 24 STAP-A, 28 FU-A, …), or -1 when there is none. */
export function h264NalType(payload: Buffer, offset: number, length: number): number {
  if (!validRange(payload, offset, length) || length < 1) return -1;
  return payload.readUInt8(offset) & 0x1f;
}

/** The type in the two-byte NAL unit header at `offset` (0–63; 48 AP, 49 FU, …), or -1 when there is none. */
export function h265NalType(payload: Buffer, offset: number, length: number): number {
  if (!validRange(payload, offset, length) || length < 2) return -1;
  return (payload.readUInt8(offset) >> 1) & 0x3f;
}

/**
 * Whether this H.264 RTP payload starts keyframe data (see the top of this file): a single NAL unit
 * (1–23), any unit of a STAP-A (24), or the first fragment of an FU-A (28). STAP-B, MTAP and FU-B
 * only exist in interleaved mode, which the relay does not negotiate; they and anything malformed
 * give false.
 */
export function h264StartsKeyframe(payload: Buffer, offset: number, length: number): boolean {
  if (!validRange(payload, offset, length) || length < 1) return false;
  const end = offset + length;
  const type = payload.readUInt8(offset) & 0x1f;
  if (type >= 1 && type <= 23) return h264NalStartsKeyframe(payload, offset, end);
  if (type === H264_STAP_A) {
    let at = offset + 1;
    while (at + 2 <= end) {
      const size = payload.readUInt16BE(at);
      at += 2;
      if (size === 0 || at + size > end) return false;
      if (h264NalStartsKeyframe(payload, at, at + size)) return true;
      at += size;
    }
    return false;
  }
  if (type === H264_FU_A) {
    if (length < 2) return false;
    const fu = payload.readUInt8(offset + 1);
    if ((fu & 0x80) === 0) return false;
    const original = fu & 0x1f;
    if (original === H264_SPS) return true;
    return original === H264_IDR && offset + 2 < end && (payload.readUInt8(offset + 2) & 0x80) !== 0;
  }
  return false;
}

/** A whole NAL unit in [start, end), end > start. */
function h264NalStartsKeyframe(buf: Buffer, start: number, end: number): boolean {
  const type = buf.readUInt8(start) & 0x1f;
  if (type === H264_SPS) return true;
  // first_mb_in_slice is the first ue(v) of the slice header; a leading 1 bit codes 0.
  return type === H264_IDR && start + 1 < end && (buf.readUInt8(start + 1) & 0x80) !== 0;
}

/**
 * Whether this H.265 RTP payload starts keyframe data (see the top of this file): a single NAL unit
 * (0–47), any unit of an AP (48), or the first fragment of an FU (49). `donl` is true when the
 * session's sprop-max-don-diff is above 0, which puts decoding-order numbers in APs and FUs. PACI
 * (50) and anything malformed give false.
 */
export function h265StartsKeyframe(payload: Buffer, offset: number, length: number, donl = false): boolean {
  if (!validRange(payload, offset, length) || length < 2) return false;
  const end = offset + length;
  const type = (payload.readUInt8(offset) >> 1) & 0x3f;
  // A single NAL unit packet carries its DONL between the header and the data (RFC 7798 §4.4.1).
  if (type < H265_AP) return h265NalStartsKeyframe(payload, offset, end, donl ? 2 : 0);
  if (type === H265_AP) {
    let at = offset + 2 + (donl ? 2 : 0);
    while (at + 2 <= end) {
      const size = payload.readUInt16BE(at);
      at += 2;
      if (size < 2 || at + size > end) return false;
      if (h265NalStartsKeyframe(payload, at, at + size)) return true;
      at += size + (donl ? 1 : 0);
    }
    return false;
  }
  if (type === H265_FU) {
    if (length < 3) return false;
    const fu = payload.readUInt8(offset + 2);
    if ((fu & 0x80) === 0) return false;
    const original = fu & 0x3f;
    const data = offset + 3 + (donl ? 2 : 0);
    if (data > end) return false;
    if (original === H265_VPS || original === H265_SPS) return true;
    return (
      original >= H265_IRAP_FIRST && original <= H265_IRAP_LAST && data < end && (payload.readUInt8(data) & 0x80) !== 0
    );
  }
  return false;
}

/** A whole NAL unit in [start, end), end >= start + 2; `skip` bytes (a DONL) sit after its header. */
function h265NalStartsKeyframe(buf: Buffer, start: number, end: number, skip = 0): boolean {
  const type = (buf.readUInt8(start) >> 1) & 0x3f;
  if (type === H265_VPS || type === H265_SPS) return true;
  // first_slice_segment_in_pic_flag is the first bit after the two-byte header.
  const data = start + 2 + skip;
  return type >= H265_IRAP_FIRST && type <= H265_IRAP_LAST && data < end && (buf.readUInt8(data) & 0x80) !== 0;
}

// --- Out-of-band parameter sets (SDP fmtp) ---

export interface H264ParameterSets {
  sps: Buffer[];
  pps: Buffer[];
}

export interface H265ParameterSets {
  vps: Buffer[];
  sps: Buffer[];
  pps: Buffer[];
}

/** NAL units (headers included) of an fmtp sprop value: base64, comma-separated; bad entries are skipped. */
function spropUnits(value: string | undefined): Buffer[] {
  if (value === undefined) return [];
  const units: Buffer[] = [];
  for (const part of value.split(',')) {
    const b64 = part.trim();
    // Buffer.from(…, 'base64') ignores junk silently; a camera's broken sprop must not become a bogus SPS.
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 === 1) continue;
    const unit = Buffer.from(b64, 'base64');
    if (unit.length > 0) units.push(unit);
  }
  return units;
}

/** SPS and PPS from an H.264 fmtp's sprop-parameter-sets (RFC 6184 8.1), sorted by NAL type. */
export function parseSpropParameterSets(fmtp: ReadonlyMap<string, string>): H264ParameterSets {
  const sets: H264ParameterSets = { sps: [], pps: [] };
  for (const unit of spropUnits(fmtp.get('sprop-parameter-sets'))) {
    const type = h264NalType(unit, 0, unit.length);
    if (type === H264_SPS) sets.sps.push(unit);
    else if (type === H264_PPS) sets.pps.push(unit);
  }
  return sets;
}

/**
 * VPS, SPS and PPS from an H.265 fmtp's sprop-vps/sprop-sps/sprop-pps (RFC 7798 7.1), checked against their NAL type.
 */
export function parseH265SpropParameterSets(fmtp: ReadonlyMap<string, string>): H265ParameterSets {
  const pick = (key: string, want: number): Buffer[] =>
    spropUnits(fmtp.get(key)).filter((u) => h265NalType(u, 0, u.length) === want);
  return { vps: pick('sprop-vps', H265_VPS), sps: pick('sprop-sps', H265_SPS), pps: pick('sprop-pps', H265_PPS) };
}

// --- H.264 SPS (ITU-T H.264 7.3.2.1.1), enough for the picture size ---

export interface H264Sps {
  profileIdc: number;
  /** constraint_set0..5 flags and the two reserved bits, as the byte after profile_idc. */
  constraintFlags: number;
  levelIdc: number;
  chromaFormatIdc: number;
  bitDepthLuma: number;
  frameMbsOnly: boolean;
  /** Displayed size: coded macroblocks minus the frame cropping. */
  width: number;
  height: number;
}

// Level 6.2 allows 139 264 macroblocks a frame and sqrt(8 × that) = 1055 across (A.3.1 (f)).
const H264_MAX_DIMENSION_MBS = 1055;

const HIGH_PROFILES: readonly number[] = [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135];

/**
 * Reads an H.264 SPS NAL unit (header byte included, no start code), e.g. from
 * parseSpropParameterSets or an in-band STAP-A. Null when it is not an SPS or does not parse.
 */
export function parseH264Sps(nal: Buffer): H264Sps | null {
  if (h264NalType(nal, 0, nal.length) !== H264_SPS) return null;
  try {
    return readSps(new BitReader(unescapeRbsp(nal, 1)));
  } catch (err) {
    if (err instanceof BitstreamEndError) return null;
    throw err;
  }
}

function readSps(r: BitReader): H264Sps | null {
  const profileIdc = r.u(8);
  const constraintFlags = r.u(8);
  const levelIdc = r.u(8);
  if (r.ue() > 31) return null; // seq_parameter_set_id
  let chromaFormatIdc = 1;
  let separateColourPlane = false;
  let bitDepthLuma = 8;
  if (HIGH_PROFILES.includes(profileIdc)) {
    chromaFormatIdc = r.ue();
    if (chromaFormatIdc > 3) return null;
    if (chromaFormatIdc === 3) separateColourPlane = r.u1() === 1;
    bitDepthLuma = r.ue() + 8;
    if (bitDepthLuma > 14 || r.ue() > 6) return null; // bit_depth_chroma_minus8
    r.u1(); // qpprime_y_zero_transform_bypass_flag
    if (r.u1() === 1) {
      const lists = chromaFormatIdc === 3 ? 12 : 8;
      for (let i = 0; i < lists; i++) if (r.u1() === 1) skipScalingList(r, i < 6 ? 16 : 64);
    }
  }
  if (r.ue() > 12) return null; // log2_max_frame_num_minus4
  const pocType = r.ue();
  if (pocType === 0) {
    if (r.ue() > 12) return null; // log2_max_pic_order_cnt_lsb_minus4
  } else if (pocType === 1) {
    r.u1(); // delta_pic_order_always_zero_flag
    r.se(); // offset_for_non_ref_pic
    r.se(); // offset_for_top_to_bottom_field
    const cycle = r.ue();
    if (cycle > 255) return null;
    for (let i = 0; i < cycle; i++) r.se();
  } else if (pocType !== 2) {
    return null;
  }
  r.ue(); // max_num_ref_frames
  r.u1(); // gaps_in_frame_num_value_allowed_flag
  const widthMbs = r.ue() + 1;
  const heightMapUnits = r.ue() + 1;
  const frameMbsOnly = r.u1() === 1;
  if (!frameMbsOnly) r.u1(); // mb_adaptive_frame_field_flag
  r.u1(); // direct_8x8_inference_flag
  let cropLeft = 0;
  let cropRight = 0;
  let cropTop = 0;
  let cropBottom = 0;
  if (r.u1() === 1) {
    cropLeft = r.ue();
    cropRight = r.ue();
    cropTop = r.ue();
    cropBottom = r.ue();
  }
  const heightMbs = heightMapUnits * (frameMbsOnly ? 1 : 2);
  if (widthMbs > H264_MAX_DIMENSION_MBS || heightMbs > H264_MAX_DIMENSION_MBS) return null;
  // 7.4.2.1.1: crop offsets count chroma samples, and field pairs when frames are coded as fields.
  const chromaArrayType = separateColourPlane ? 0 : chromaFormatIdc;
  const cropUnitX = chromaArrayType === 0 || chromaFormatIdc === 3 ? 1 : 2;
  const cropUnitY = (chromaArrayType === 1 ? 2 : 1) * (frameMbsOnly ? 1 : 2);
  const width = widthMbs * 16 - cropUnitX * (cropLeft + cropRight);
  const height = heightMbs * 16 - cropUnitY * (cropTop + cropBottom);
  if (width <= 0 || height <= 0) return null;
  return { profileIdc, constraintFlags, levelIdc, chromaFormatIdc, bitDepthLuma, frameMbsOnly, width, height };
}

function skipScalingList(r: BitReader, size: number): void {
  let last = 8;
  let next = 8;
  for (let j = 0; j < size; j++) {
    if (next !== 0) next = (last + r.se() + 256) % 256;
    last = next === 0 ? last : next;
  }
}
