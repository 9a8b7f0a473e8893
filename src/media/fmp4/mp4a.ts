import type { BoxWriter } from './box-writer.js';
import type { AacTrack } from './track.js';

// mp4a with its esds (ISO/IEC 14496-14 5.6, 14496-1 7.2.6): the AudioSpecificConfig as the camera
// sent it. Descriptor lengths fit one byte: the config is at most 64 bytes (aac-config.ts).

const OBJECT_TYPE_AAC = 0x40;
const STREAM_TYPE_AUDIO = 0x05;

export function writeMp4a(w: BoxWriter, track: AacTrack): void {
  const { channels, sampleRate, bytes: config } = track.config;
  w.start('mp4a')
    .zeros(6)
    .u16(1) // data_reference_index
    .zeros(8)
    .u16(channels)
    .u16(16) // samplesize
    .u16(0)
    .u16(0)
    // 16.16 fixed point: rates of 64 kHz and more do not fit and the esds config is authoritative.
    .u32(sampleRate < 0x10000 ? sampleRate * 0x10000 : 0);
  const decoderSpecific = 2 + config.length;
  const decoderConfig = 13 + decoderSpecific;
  const slConfig = 3;
  w.startFull('esds', 0, 0)
    .u8(0x03)
    .u8(3 + 2 + decoderConfig + slConfig)
    .u16(track.id) // ES_ID
    .u8(0) // no stream dependence, URL or OCR stream
    .u8(0x04)
    .u8(decoderConfig - 2)
    .u8(OBJECT_TYPE_AAC)
    .u8((STREAM_TYPE_AUDIO << 2) | 1)
    .u24(0) // bufferSizeDB
    .u32(0) // maxBitrate
    .u32(0) // avgBitrate
    .u8(0x05)
    .u8(config.length)
    .bytes(config)
    .u8(0x06)
    .u8(1)
    .u8(0x02) // SLConfig predefined: MP4
    .end()
    .end();
}
