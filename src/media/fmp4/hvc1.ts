import type { BoxWriter } from './box-writer.js';
import type { H265Track } from './track.js';
import { writeVisualSampleEntryStart } from './trak.js';

// hvc1 with its hvcC (ISO/IEC 14496-15 8.3.3): 'hvc1' (not 'hev1') says every parameter set is in
// the sample entry, which Safari requires; the in-band copies cameras repeat stay in the samples,
// which the format allows as long as they are the same.

export function writeHvc1(w: BoxWriter, track: H265Track): void {
  const info = track.info;
  writeVisualSampleEntryStart(w, 'hvc1', track.width, track.height);
  w.start('hvcC')
    .u8(1)
    .u8((info.generalProfileSpace << 6) | (info.generalTierFlag << 5) | info.generalProfileIdc)
    .u32(info.generalProfileCompatibility)
    .bytes(info.generalConstraintIndicator)
    .u8(info.generalLevelIdc)
    .u16(0xf000) // min_spatial_segmentation_idc 0
    .u8(0xfc) // parallelismType 0: unknown
    .u8(0xfc | info.chromaFormatIdc)
    .u8(0xf8 | (info.bitDepthLuma - 8))
    .u8(0xf8 | (info.bitDepthChroma - 8))
    .u16(0) // avgFrameRate: unknown
    .u8((info.maxSubLayers << 3) | ((info.temporalIdNesting ? 1 : 0) << 2) | 3) // constantFrameRate 0, lengthSizeMinusOne 3
    .u8(3);
  for (const [type, sets] of [
    [32, track.vps],
    [33, track.sps],
    [34, track.pps],
  ] as const) {
    w.u8(0x80 | type).u16(sets.length); // array_completeness: no other sets of this type in-band
    for (const set of sets) w.u16(set.length).bytes(set);
  }
  w.end().end();
}
