import type { BoxWriter } from './box-writer.js';
import type { G711Track } from './track.js';

// G.711 as QuickTime describes it: a 'ulaw' or 'alaw' SoundSampleDescription, version 0, with no
// boxes after its fields. ISO BMFF itself has no G.711 sample entry; ffmpeg's mov/mp4 reader takes
// this one, and ffmpeg is what reads the recorder's clips. Samples are bytes of the law's code, one
// a sample a channel (the reader derives that from the fourcc, whatever samplesize says).

export function writeG711Entry(w: BoxWriter, track: G711Track): void {
  w.start(track.law === 'mu' ? 'ulaw' : 'alaw')
    .zeros(6)
    .u16(1) // data_reference_index
    .u16(0) // version
    .u16(0) // revision level
    .u32(0) // vendor
    .u16(track.channels)
    .u16(16) // samplesize: bits of a sample decoded (G.711 decodes to 16)
    .u16(0) // compression ID
    .u16(0) // packet size
    .u32(track.sampleRate * 0x10000) // 16.16, the track's timescale; g711Track keeps it below 65536
    .end();
}
