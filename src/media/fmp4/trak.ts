import { writeUnityMatrix, type BoxWriter } from './box-writer.js';
import { writeAvc1 } from './avc1.js';
import { writeG711Entry } from './g711-entry.js';
import { writeHvc1 } from './hvc1.js';
import { writeMp4a } from './mp4a.js';
import type { Fmp4Track } from './track.js';

// trak and everything under it (tkhd, mdia/mdhd/hdlr, minf/vmhd|smhd/dinf/stbl). In a fragmented
// file the sample tables are empty: samples are described by the fragments' trun boxes.

const TRACK_ENABLED_IN_MOVIE = 0x000003;
const LANGUAGE_UND = 0x55c4; // ISO 639-2 'und', 5 bits a letter

export function writeTrak(w: BoxWriter, track: Fmp4Track): void {
  w.start('trak');
  writeTkhd(w, track);
  w.start('mdia');
  w.startFull('mdhd', 0, 0).u32(0).u32(0).u32(track.timescale).u32(0).u16(LANGUAGE_UND).u16(0).end();
  const video = track.kind === 'video';
  w.startFull('hdlr', 0, 0)
    .u32(0)
    .fourcc(video ? 'vide' : 'soun')
    .zeros(12)
    .bytes(Buffer.from(video ? 'VideoHandler\0' : 'SoundHandler\0', 'latin1'))
    .end();
  w.start('minf');
  if (video) w.startFull('vmhd', 0, 1).zeros(8).end();
  else w.startFull('smhd', 0, 0).zeros(4).end();
  w.start('dinf').startFull('dref', 0, 0).u32(1).startFull('url ', 0, 1).end().end().end();
  writeStbl(w, track);
  w.end().end().end(); // minf, mdia, trak
}

function writeTkhd(w: BoxWriter, track: Fmp4Track): void {
  w.startFull('tkhd', 0, TRACK_ENABLED_IN_MOVIE)
    .u32(0)
    .u32(0)
    .u32(track.id)
    .u32(0)
    .u32(0) // duration
    .zeros(8)
    .u16(0) // layer
    .u16(0) // alternate_group
    .u16(track.kind === 'audio' ? 0x0100 : 0)
    .u16(0);
  writeUnityMatrix(w);
  const [width, height] = track.kind === 'video' ? [track.width, track.height] : [0, 0];
  w.u32(width * 0x10000)
    .u32(height * 0x10000)
    .end();
}

function writeStbl(w: BoxWriter, track: Fmp4Track): void {
  w.start('stbl');
  w.startFull('stsd', 0, 0).u32(1);
  if (track.codec === 'H264') writeAvc1(w, track);
  else if (track.codec === 'H265') writeHvc1(w, track);
  else if (track.codec === 'G711') writeG711Entry(w, track);
  else writeMp4a(w, track);
  w.end();
  w.startFull('stts', 0, 0).u32(0).end();
  w.startFull('stsc', 0, 0).u32(0).end();
  w.startFull('stsz', 0, 0).u32(0).u32(0).end();
  w.startFull('stco', 0, 0).u32(0).end();
  w.end();
}

/** The fields every visual sample entry (avc1, hvc1) starts with (ISO/IEC 14496-12 12.1.3). */
export function writeVisualSampleEntryStart(w: BoxWriter, type: string, width: number, height: number): void {
  w.start(type)
    .zeros(6)
    .u16(1) // data_reference_index
    .zeros(2 + 2 + 12)
    .u16(width)
    .u16(height)
    .u32(0x00480000) // 72 dpi
    .u32(0x00480000)
    .u32(0)
    .u16(1) // frame_count
    .zeros(32) // compressorname
    .u16(0x0018) // depth
    .i16(-1);
}
