import { BitReader, unescapeRbsp } from './bitstream.js';
import { BitstreamEndError } from './errors.js';

// H.265 SPS (ITU-T H.265 7.3.2.2), read as far as the picture size and bit depths: what an hvcC box
// (ISO/IEC 14496-15 8.3.3) and an RFC 6381 codecs string need. The general profile_tier_level is
// kept as its 12 raw bytes because hvcC copies them field for field.

export interface H265Sps {
  generalProfileSpace: number;
  generalTierFlag: number;
  generalProfileIdc: number;
  /** general_profile_compatibility_flag[0..31] as one 32-bit number, flag 0 the most significant. */
  generalProfileCompatibility: number;
  /** The 48 constraint bits (progressive_source_flag onwards), 6 bytes. */
  generalConstraintIndicator: Buffer;
  generalLevelIdc: number;
  maxSubLayers: number;
  temporalIdNesting: boolean;
  chromaFormatIdc: number;
  /**
   * sps_max_num_reorder_pics of the highest sub-layer: how many pictures may precede one in decoding order and follow
   * it in output.
   */
  maxNumReorderPics: number;
  bitDepthLuma: number;
  bitDepthChroma: number;
  width: number;
  height: number;
}

const H265_SPS = 33;
// Level 6.2's MaxLumaPs is 35 651 584 and a side is at most sqrt(8 × that) (A.4.1).
const MAX_DIMENSION = 16_888;

/** Reads an H.265 SPS NAL unit (two-byte header included, no start code). Null when it does not parse. */
export function parseH265Sps(nal: Buffer): H265Sps | null {
  if (nal.length < 3 || ((nal.readUInt8(0) >> 1) & 0x3f) !== H265_SPS) return null;
  const bytes = unescapeRbsp(nal, 2);
  try {
    return readSps(new BitReader(bytes), bytes);
  } catch (err) {
    if (err instanceof BitstreamEndError) return null;
    throw err;
  }
}

function readSps(r: BitReader, bytes: Buffer): H265Sps | null {
  r.u(4); // sps_video_parameter_set_id
  const maxSubLayersMinus1 = r.u(3);
  if (maxSubLayersMinus1 > 6) return null;
  const temporalIdNesting = r.u1() === 1;
  // general_profile_tier_level: 2+1+5 bits, 32 compatibility flags, 48 constraint bits, level.
  if (bytes.length < 13) return null;
  const first = r.u(8);
  const generalProfileCompatibility = r.u(32);
  const generalConstraintIndicator = Buffer.from(bytes.subarray(6, 12));
  r.skip(48);
  const generalLevelIdc = r.u(8);
  const subProfilePresent: boolean[] = [];
  const subLevelPresent: boolean[] = [];
  for (let i = 0; i < maxSubLayersMinus1; i++) {
    subProfilePresent.push(r.u1() === 1);
    subLevelPresent.push(r.u1() === 1);
  }
  if (maxSubLayersMinus1 > 0) r.skip(2 * (8 - maxSubLayersMinus1));
  for (let i = 0; i < maxSubLayersMinus1; i++) {
    if (subProfilePresent[i]) r.skip(88);
    if (subLevelPresent[i]) r.skip(8);
  }
  if (r.ue() > 15) return null; // sps_seq_parameter_set_id
  const chromaFormatIdc = r.ue();
  if (chromaFormatIdc > 3) return null;
  const separateColourPlane = chromaFormatIdc === 3 && r.u1() === 1;
  const codedWidth = r.ue();
  const codedHeight = r.ue();
  let crop = [0, 0, 0, 0];
  if (r.u1() === 1) crop = [r.ue(), r.ue(), r.ue(), r.ue()];
  const bitDepthLuma = r.ue() + 8;
  const bitDepthChroma = r.ue() + 8;
  if (bitDepthLuma > 16 || bitDepthChroma > 16) return null;
  if (r.ue() > 12) return null; // log2_max_pic_order_cnt_lsb_minus4
  const orderingInfoForAll = r.u1() === 1;
  let maxNumReorderPics = 0;
  for (let i = orderingInfoForAll ? 0 : maxSubLayersMinus1; i <= maxSubLayersMinus1; i++) {
    r.ue(); // sps_max_dec_pic_buffering_minus1
    maxNumReorderPics = r.ue();
    r.ue(); // sps_max_latency_increase_plus1
  }
  if (maxNumReorderPics > 16) return null;
  // 7.4.3.2.1: conformance window offsets count chroma samples.
  const chromaArrayType = separateColourPlane ? 0 : chromaFormatIdc;
  const subWidthC = chromaArrayType === 1 || chromaArrayType === 2 ? 2 : 1;
  const subHeightC = chromaArrayType === 1 ? 2 : 1;
  const [left = 0, right = 0, top = 0, bottom = 0] = crop;
  const width = codedWidth - subWidthC * (left + right);
  const height = codedHeight - subHeightC * (top + bottom);
  if (width <= 0 || height <= 0 || codedWidth > MAX_DIMENSION || codedHeight > MAX_DIMENSION) return null;
  return {
    generalProfileSpace: first >> 6,
    generalTierFlag: (first >> 5) & 1,
    generalProfileIdc: first & 0x1f,
    generalProfileCompatibility,
    generalConstraintIndicator,
    generalLevelIdc,
    maxSubLayers: maxSubLayersMinus1 + 1,
    temporalIdNesting,
    chromaFormatIdc,
    maxNumReorderPics,
    bitDepthLuma,
    bitDepthChroma,
    width,
    height,
  };
}
