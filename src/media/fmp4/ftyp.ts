import type { BoxWriter } from './box-writer.js';

// CMAF (ISO/IEC 23000-19) fragmented MP4: 'iso6' allows the v1 trun with signed composition offsets
// that B-frame streams use here, 'cmfc' says the segments follow CMAF's structure.
const MAJOR = 'iso6';
const COMPATIBLE = ['iso6', 'cmfc', 'iso5', 'mp41'];

export function writeFtyp(w: BoxWriter): void {
  w.start('ftyp').fourcc(MAJOR).u32(0);
  for (const brand of COMPATIBLE) w.fourcc(brand);
  w.end();
}
