import { open, type FileHandle } from 'node:fs/promises';
import { MediaFormatError } from '../errors.js';
import { findBox, findBoxes, readBoxes, readTfdt, readTfhd, readTrun } from '../fmp4/reader.js';
import { SAMPLE_FLAGS_SYNC } from '../fmp4/moof.js';
import type { FragmentEntry } from './fragment-table.js';
import { readBytes } from './read-bytes.js';

// A footage file read back from its boxes, for a file the index lacks (written before a crash or a
// power cut): its init segment, its whole fragments, and where the last whole one ends, so a torn
// tail (a fragment the disk got only part of) can be cut off. Reads the boxes' headers and each
// moof, never the media.

export interface FootageFileLayout {
  initBytes: number;
  fragments: FragmentEntry[];
  /** Decode time of the first fragment's video, 90 kHz ticks from the muxer's zero. */
  firstDecodeTime: number;
  /** Bytes up to the end of the last whole fragment. */
  wholeBytes: number;
}

const VIDEO_TRACK = 1;
/** A moof is a few kB; a larger one is not ours. */
const MAX_MOOF_BYTES = 4 << 20;

/** Size and type of the box at `offset`, or null past the end or for a header cut off. */
async function boxHeader(
  handle: FileHandle,
  offset: number,
  fileBytes: number,
): Promise<{ size: number; type: string } | null> {
  if (offset + 8 > fileBytes) return null;
  const head = await readBytes(handle, offset, 8);
  if (head.length < 8) return null;
  const size = head.readUInt32BE(0);
  if (size < 8) return null;
  return { size, type: head.toString('latin1', 4, 8) };
}

/** The video traf's duration, first decode time and keyframe flag of a moof; null when it has none. */
function videoRun(moof: Buffer): { duration: number; decodeTime: number; keyframe: boolean } | null {
  const trafs = findBoxes(readBoxes(moof), 'traf');
  for (const traf of trafs) {
    const tfhd = findBox(traf.children, 'tfhd');
    const tfdt = findBox(traf.children, 'tfdt');
    const trun = findBox(traf.children, 'trun');
    if (!tfhd || !tfdt || !trun || readTfhd(tfhd).trackId !== VIDEO_TRACK) continue;
    const samples = readTrun(trun).samples;
    const duration = samples.reduce((sum, s) => sum + (s.duration ?? 0), 0);
    return { duration, decodeTime: readTfdt(tfdt).baseDecodeTime, keyframe: samples[0]?.flags === SAMPLE_FLAGS_SYNC };
  }
  return null;
}

/** The layout of a footage file; null when it holds no whole fragment (or is not one of ours). */
export async function readFootageFile(file: string): Promise<FootageFileLayout | null> {
  const handle = await open(file, 'r');
  try {
    const fileBytes = (await handle.stat()).size;
    let offset = 0;
    let initBytes = 0;
    const fragments: FragmentEntry[] = [];
    let firstDecodeTime: number | null = null;
    for (;;) {
      const box = await boxHeader(handle, offset, fileBytes);
      if (!box || offset + box.size > fileBytes) break;
      if (box.type === 'ftyp' || box.type === 'moov') {
        if (fragments.length > 0) return null;
        offset += box.size;
        initBytes = offset;
        continue;
      }
      if (box.type !== 'moof' || box.size > MAX_MOOF_BYTES || initBytes === 0) break;
      const mdat = await boxHeader(handle, offset + box.size, fileBytes);
      if (!mdat || mdat.type !== 'mdat' || offset + box.size + mdat.size > fileBytes) break;
      const run = videoRun(await readBytes(handle, offset, box.size));
      if (!run) break;
      firstDecodeTime ??= run.decodeTime;
      fragments.push({ bytes: box.size + mdat.size, duration: run.duration, keyframe: run.keyframe });
      offset += box.size + mdat.size;
    }
    if (fragments.length === 0 || firstDecodeTime === null) return null;
    return { initBytes, fragments, firstDecodeTime, wholeBytes: offset };
  } catch (err) {
    // Boxes that do not parse: not a file this gateway wrote whole. A read error is the disk's, and
    // says nothing of the file.
    if (err instanceof MediaFormatError) return null;
    throw err;
  } finally {
    await handle.close();
  }
}
