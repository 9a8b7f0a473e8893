import { findBox, findBoxes, readBoxes, readTfdt, readTfhd, readTrun, type Box } from '../fmp4/reader.js';
import { MediaFormatError } from '../errors.js';
import type { ConcatEntry } from './ffmpeg-args.js';

// Where ffmpeg's concat demuxer puts each segment of a clip: it shifts a file so that its earliest
// sample, over all its tracks, lands where the files before it end by their listed durations. The
// segments of one segmenter run share one timeline, but a file's earliest sample is not always its
// first picture: an audio frame that came after its group of pictures was closed starts the next
// file a little before its video. So within a run each file is listed as long as the distance from
// its earliest sample to the next file's, and the joins are seamless; the last file of a run keeps
// its own length.

/** The earliest presentation time in a segment file, in seconds of its run's timeline; null when unreadable. */
export function segmentStartSeconds(file: Buffer): number | null {
  let boxes: Box[];
  try {
    boxes = readBoxes(file);
  } catch (err) {
    if (err instanceof MediaFormatError) return null;
    throw err;
  }
  const timescales = new Map<number, number>();
  for (const trak of findBoxes(boxes, 'trak')) {
    const tkhd = findBox(trak.children, 'tkhd');
    const mdhd = findBox(trak.children, 'mdhd');
    if (!tkhd || !mdhd) continue;
    // Version 1 boxes have 64-bit times before these fields.
    const trackId = tkhd.body.readUInt32BE(tkhd.body[0] === 1 ? 20 : 12);
    const timescale = mdhd.body.readUInt32BE(mdhd.body[0] === 1 ? 20 : 12);
    if (timescale > 0) timescales.set(trackId, timescale);
  }
  const moof = boxes.find((b) => b.type === 'moof');
  if (!moof) return null;
  let earliest: number | null = null;
  for (const traf of moof.children.filter((b) => b.type === 'traf')) {
    const tfhd = findBox(traf.children, 'tfhd');
    const tfdt = findBox(traf.children, 'tfdt');
    const trun = findBox(traf.children, 'trun');
    if (!tfhd || !tfdt || !trun) continue;
    const timescale = timescales.get(readTfhd(tfhd).trackId);
    if (!timescale) continue;
    const first = readTrun(trun).samples[0];
    const at = (readTfdt(tfdt).baseDecodeTime + (first?.compositionOffset ?? 0)) / timescale;
    earliest = earliest === null ? at : Math.min(earliest, at);
  }
  return earliest;
}

/** A segment's run: the prefix of its file name (`r3-000000012.mp4` → `r3`). */
const runOf = (file: string): string => /(?:^|\/)(r\d+)-\d+\.mp4$/.exec(file)?.[1] ?? file;

/**
 * The concat durations that join a clip's segments seamlessly: `starts[i]` is segment i's earliest
 * sample (segmentStartSeconds); within a run, a segment lasts until the next one starts.
 */
export function seamlessDurations(
  entries: readonly ConcatEntry[],
  starts: ReadonlyArray<number | null>,
): ConcatEntry[] {
  return entries.map((entry, i) => {
    const next = entries[i + 1];
    const start = starts[i];
    const nextStart = starts[i + 1];
    if (!next || start == null || nextStart == null || runOf(next.path) !== runOf(entry.path)) return entry;
    const gap = nextStart - start;
    return gap > 0 ? { path: entry.path, durationS: gap } : entry;
  });
}
