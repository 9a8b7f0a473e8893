import { MediaFormatError } from '../errors.js';

// A small ISO BMFF reader: the tree of boxes, and the fragment boxes decoded field by field. Used by
// the round-trip tests (read ∘ write = identity) and by anything that must check a fragment it did
// not write. Sizes are checked against their parent: a box that claims more than it has is a
// MediaFormatError('bad_box'), never a read past the end.

export interface Box {
  type: string;
  /** Offset of the box in the buffer given to readBoxes. */
  start: number;
  size: number;
  /** The box's contents after its header (for full boxes, version and flags included). */
  body: Buffer;
  children: Box[];
}

/** Boxes whose body is only boxes, and sample entries whose boxes follow fixed fields (bytes to skip). */
const CONTAINERS: ReadonlyMap<string, number> = new Map([
  ['moov', 0],
  ['trak', 0],
  ['mdia', 0],
  ['minf', 0],
  ['dinf', 0],
  ['stbl', 0],
  ['mvex', 0],
  ['moof', 0],
  ['traf', 0],
  ['edts', 0],
  ['stsd', 8],
  ['dref', 8],
  ['avc1', 78],
  ['hvc1', 78],
  ['hev1', 78],
  ['avc3', 78],
  ['mp4a', 28],
]);

const MAX_DEPTH = 16;

export function readBoxes(buf: Buffer, start = 0, end = buf.length, depth = 0): Box[] {
  if (depth > MAX_DEPTH) throw new MediaFormatError('bad_box', 'boxes nested too deep');
  const boxes: Box[] = [];
  let at = start;
  while (at < end) {
    if (at + 8 > end) throw new MediaFormatError('bad_box', `${end - at} stray bytes at ${at}`);
    let size = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    let header = 8;
    if (size === 1) {
      if (at + 16 > end) throw new MediaFormatError('bad_box', `${type} largesize cut off`);
      size = Number(buf.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) {
      size = end - at;
    }
    if (size < header || at + size > end) throw new MediaFormatError('bad_box', `${type} at ${at} has size ${size}`);
    const body = buf.subarray(at + header, at + size);
    const skip = CONTAINERS.get(type);
    let children: Box[] = [];
    if (skip !== undefined) {
      if (skip > body.length) throw new MediaFormatError('bad_box', `${type} shorter than its fields`);
      children = readBoxes(buf, at + header + skip, at + size, depth + 1);
    }
    boxes.push({ type, start: at, size, body, children });
    at += size;
  }
  return boxes;
}

/** The first box of this type in the tree (depth first), or undefined. */
export function findBox(boxes: readonly Box[], type: string): Box | undefined {
  for (const box of boxes) {
    if (box.type === type) return box;
    const inner = findBox(box.children, type);
    if (inner) return inner;
  }
  return undefined;
}

export function findBoxes(boxes: readonly Box[], type: string, out: Box[] = []): Box[] {
  for (const box of boxes) {
    if (box.type === type) out.push(box);
    findBoxes(box.children, type, out);
  }
  return out;
}

function fullBox(box: Box): { version: number; flags: number } {
  if (box.body.length < 4) throw new MediaFormatError('bad_box', `${box.type} without version and flags`);
  return { version: box.body.readUInt8(0), flags: box.body.readUIntBE(1, 3) };
}

function need(box: Box, bytes: number): void {
  if (box.body.length < bytes) throw new MediaFormatError('bad_box', `${box.type} shorter than its fields`);
}

export function readMfhd(box: Box): { sequence: number } {
  need(box, 8);
  return { sequence: box.body.readUInt32BE(4) };
}

export function readTfhd(box: Box): { flags: number; trackId: number; defaultSampleFlags: number | null } {
  const { flags } = fullBox(box);
  need(box, 8);
  let at = 8;
  if (flags & 0x01) at += 8; // base_data_offset
  if (flags & 0x02) at += 4; // sample_description_index
  if (flags & 0x08) at += 4; // default_sample_duration
  if (flags & 0x10) at += 4; // default_sample_size
  let defaultSampleFlags: number | null = null;
  if (flags & 0x20) {
    need(box, at + 4);
    defaultSampleFlags = box.body.readUInt32BE(at);
  }
  return { flags, trackId: box.body.readUInt32BE(4), defaultSampleFlags };
}

export function readTfdt(box: Box): { baseDecodeTime: number } {
  const { version } = fullBox(box);
  need(box, version === 1 ? 12 : 8);
  return { baseDecodeTime: version === 1 ? Number(box.body.readBigUInt64BE(4)) : box.body.readUInt32BE(4) };
}

export interface TrunSample {
  duration: number | null;
  size: number | null;
  flags: number | null;
  compositionOffset: number | null;
}

export function readTrun(box: Box): { version: number; dataOffset: number | null; samples: TrunSample[] } {
  const { version, flags } = fullBox(box);
  need(box, 8);
  const count = box.body.readUInt32BE(4);
  let at = 8;
  let dataOffset: number | null = null;
  if (flags & 0x01) {
    need(box, at + 4);
    dataOffset = box.body.readInt32BE(at);
    at += 4;
  }
  if (flags & 0x04) at += 4; // first_sample_flags
  const fields = [0x100, 0x200, 0x400, 0x800].filter((f) => flags & f).length;
  need(box, at + count * fields * 4);
  const samples: TrunSample[] = [];
  const next = (present: number): number | null => {
    if (!(flags & present)) return null;
    const v = present === 0x800 && version === 1 ? box.body.readInt32BE(at) : box.body.readUInt32BE(at);
    at += 4;
    return v;
  };
  for (let i = 0; i < count; i++) {
    samples.push({ duration: next(0x100), size: next(0x200), flags: next(0x400), compositionOffset: next(0x800) });
  }
  return { version, dataOffset, samples };
}
