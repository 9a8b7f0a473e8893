import type { BoxWriter } from './box-writer.js';
import type { H264Track } from './track.js';
import { writeVisualSampleEntryStart } from './trak.js';

// avc1 with its avcC (ISO/IEC 14496-15 5.3.3): the SPS and PPS out of band, NAL units in samples
// prefixed by 4-byte lengths. The high profiles carry the chroma format and bit depths too.

const HIGH_PROFILES_WITH_EXTENSION = [100, 110, 122, 144];

export function writeAvc1(w: BoxWriter, track: H264Track): void {
  writeVisualSampleEntryStart(w, 'avc1', track.width, track.height);
  const sps = track.sps[0] as Buffer;
  w.start('avcC')
    .u8(1)
    .u8(sps.readUInt8(1)) // AVCProfileIndication
    .u8(sps.readUInt8(2)) // profile_compatibility
    .u8(sps.readUInt8(3)) // AVCLevelIndication
    .u8(0xfc | 3) // lengthSizeMinusOne
    .u8(0xe0 | track.sps.length);
  for (const set of track.sps) w.u16(set.length).bytes(set);
  w.u8(track.pps.length);
  for (const set of track.pps) w.u16(set.length).bytes(set);
  if (HIGH_PROFILES_WITH_EXTENSION.includes(track.info.profileIdc)) {
    w.u8(0xfc | track.info.chromaFormatIdc)
      .u8(0xf8 | (track.info.bitDepthLuma - 8))
      .u8(0xf8 | (track.info.bitDepthLuma - 8))
      .u8(0); // numOfSequenceParameterSetExt
  }
  w.end().end();
}
