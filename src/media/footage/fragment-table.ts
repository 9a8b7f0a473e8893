import { FragmentTableError } from './errors.js';

// The fragments of one footage file, as the index keeps them: a file is an init segment followed by
// fragments (moof + mdat, one per group of pictures), back to back, so each fragment's place is the
// sum of the sizes before it. Per fragment 8 bytes: its size (31 bits, the top bit set when it
// starts with a keyframe) and its video duration in 90 kHz ticks. Encoded once when the file is
// closed, read when a range is played, downloaded or pictured.

export interface FragmentEntry {
  /** Bytes of moof + mdat. */
  bytes: number;
  /** Video duration in 90 kHz ticks. */
  duration: number;
  keyframe: boolean;
}

/** A fragment with its place: byte offset in the file, and start in ticks after the file's first fragment. */
export interface PlacedFragment extends FragmentEntry {
  offset: number;
  start: number;
}

const ENTRY_BYTES = 8;
const KEYFRAME_BIT = 0x80000000;
const MAX_FRAGMENT_BYTES = 0x7fffffff;
const U32_MAX = 0xffffffff;

export function encodeFragmentTable(entries: readonly FragmentEntry[]): Buffer {
  const out = Buffer.allocUnsafe(entries.length * ENTRY_BYTES);
  entries.forEach((e, i) => {
    if (!Number.isInteger(e.bytes) || e.bytes < 1 || e.bytes > MAX_FRAGMENT_BYTES)
      throw new FragmentTableError(`fragment of ${e.bytes} bytes`);
    if (!Number.isInteger(e.duration) || e.duration < 0 || e.duration > U32_MAX)
      throw new FragmentTableError(`fragment duration ${e.duration}`);
    out.writeUInt32BE((e.bytes | (e.keyframe ? KEYFRAME_BIT : 0)) >>> 0, i * ENTRY_BYTES);
    out.writeUInt32BE(e.duration, i * ENTRY_BYTES + 4);
  });
  return out;
}

/** The fragments placed after an init segment of `initBytes`; a FragmentTableError when the table is torn. */
export function decodeFragmentTable(table: Uint8Array, initBytes: number): PlacedFragment[] {
  if (table.length % ENTRY_BYTES !== 0) throw new FragmentTableError(`a fragment table of ${table.length} bytes`);
  const view = new DataView(table.buffer, table.byteOffset, table.byteLength);
  const out: PlacedFragment[] = [];
  let offset = initBytes;
  let start = 0;
  for (let at = 0; at < table.length; at += ENTRY_BYTES) {
    const word = view.getUint32(at);
    const duration = view.getUint32(at + 4);
    const bytes = word & MAX_FRAGMENT_BYTES;
    if (bytes === 0) throw new FragmentTableError('a fragment of 0 bytes');
    out.push({ bytes, duration, keyframe: (word & KEYFRAME_BIT) !== 0, offset, start });
    offset += bytes;
    start += duration;
  }
  return out;
}
