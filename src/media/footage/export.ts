import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { MediaFormatError } from '../errors.js';
import { findBox, readBoxes, type Box } from '../fmp4/reader.js';
import type { IndexedFootageFile } from '../../store/footage.js';
import type { ExportPlan, PlannedFragment } from './range-plan.js';
import { readBytes } from './read-bytes.js';

// An export plan (range-plan.ts) as bytes: the init segment, then each fragment as it is on disk
// with its moof's decode times moved onto the export's own time line (zero at its first fragment,
// gaps kept as gaps) and its sequence number renumbered. A moof keeps its size, so the export's
// length and any byte range of it are known before a byte is read; the media is read from disk in
// chunks as the client takes it, so memory stays flat whatever the range.

const CHUNK_BYTES = 256 * 1024;

/** The first `initBytes` bytes of a footage file: its init segment. */
export async function readInit(root: string, file: IndexedFootageFile): Promise<Buffer> {
  const handle = await open(path.join(root, file.name), 'r');
  try {
    return await readBytes(handle, 0, file.initBytes);
  } finally {
    await handle.close();
  }
}

/** track_ID → timescale, from an init segment's moov (tkhd and mdhd of each trak). */
export function trackTimescales(init: Buffer): Map<number, number> {
  const out = new Map<number, number>();
  const moov = findBox(readBoxes(init), 'moov');
  for (const trak of moov?.children.filter((b) => b.type === 'trak') ?? []) {
    const tkhd = findBox(trak.children, 'tkhd');
    const mdhd = findBox(trak.children, 'mdhd');
    if (!tkhd || !mdhd) continue;
    const trackId = tkhd.body.readUInt32BE(tkhd.body.readUInt8(0) === 1 ? 20 : 12);
    const timescale = mdhd.body.readUInt32BE(mdhd.body.readUInt8(0) === 1 ? 20 : 12);
    out.set(trackId, timescale);
  }
  return out;
}

/** Moves each traf's tfdt by its track's shift (in that track's units) and renumbers mfhd, in place. */
export function patchMoof(moof: Buffer, sequence: number, shift: (trackId: number) => number): void {
  const [box] = readBoxes(moof);
  if (!box || box.type !== 'moof')
    throw new MediaFormatError('bad_box', 'a footage fragment does not start with a moof');
  const header = (b: Box): number => b.size - b.body.length;
  for (const child of box.children) {
    if (child.type === 'mfhd') moof.writeUInt32BE(sequence, child.start + header(child) + 4);
    if (child.type !== 'traf') continue;
    const tfhd = findBox(child.children, 'tfhd');
    const tfdt = findBox(child.children, 'tfdt');
    if (!tfhd || !tfdt) continue;
    const trackId = tfhd.body.readUInt32BE(4);
    const at = tfdt.start + header(tfdt) + 4;
    if (tfdt.body.readUInt8(0) === 1)
      moof.writeBigUInt64BE(BigInt(Math.max(0, Number(moof.readBigUInt64BE(at)) + shift(trackId))), at);
    else moof.writeUInt32BE(Math.max(0, moof.readUInt32BE(at) + shift(trackId)), at);
  }
}

interface Piece {
  /** Offset in the export. */
  at: number;
  bytes: number;
  fragment: PlannedFragment | null;
  sequence: number;
}

/**
 * The bytes [first, last] of the export (both inclusive, within plan.bytes), read from the files
 * under `root` as the consumer asks for them.
 */
export async function* exportBytes(
  root: string,
  plan: ExportPlan,
  init: Buffer,
  first: number,
  last: number,
): AsyncGenerator<Buffer> {
  const timescales = trackTimescales(init);
  const pieces: Piece[] = [{ at: 0, bytes: plan.initFile.initBytes, fragment: null, sequence: 0 }];
  let at = plan.initFile.initBytes;
  plan.fragments.forEach((fragment, i) => {
    pieces.push({ at, bytes: fragment.fragment.bytes, fragment, sequence: i + 1 });
    at += fragment.fragment.bytes;
  });
  const handles = new Map<string, FileHandle>();
  const handleOf = async (file: IndexedFootageFile): Promise<FileHandle> => {
    let handle = handles.get(file.name);
    if (!handle) {
      // One file open at a time: the fragments come file after file.
      for (const [name, h] of handles) {
        await h.close();
        handles.delete(name);
      }
      handle = await open(path.join(root, file.name), 'r');
      handles.set(file.name, handle);
    }
    return handle;
  };
  try {
    for (const piece of pieces) {
      const pieceEnd = piece.at + piece.bytes - 1;
      if (pieceEnd < first || piece.at > last) continue;
      const from = Math.max(first, piece.at) - piece.at;
      const to = Math.min(last, pieceEnd) - piece.at;
      if (!piece.fragment) {
        yield init.subarray(from, to + 1);
        continue;
      }
      const { file, fragment } = piece.fragment;
      const handle = await handleOf(file);
      const head = await readBytes(handle, fragment.offset, 8);
      const moofBytes = head.length === 8 ? head.readUInt32BE(0) : 0;
      if (moofBytes < 8 || moofBytes > fragment.bytes)
        throw new MediaFormatError('bad_box', `${file.name}: no moof at ${fragment.offset}`);
      let pos = from;
      if (pos < moofBytes) {
        const moof = await readBytes(handle, fragment.offset, moofBytes);
        const shiftMs = file.zeroMs - plan.startMs;
        patchMoof(moof, piece.sequence, (trackId) =>
          Math.round((shiftMs * (timescales.get(trackId) ?? 90_000)) / 1000),
        );
        yield moof.subarray(pos, Math.min(to, moofBytes - 1) + 1);
        pos = moofBytes;
      }
      while (pos <= to) {
        const length = Math.min(CHUNK_BYTES, to - pos + 1);
        const chunk = await readBytes(handle, fragment.offset + pos, length);
        if (chunk.length < length) throw new MediaFormatError('bad_box', `${file.name} is shorter than its index says`);
        yield chunk;
        pos += length;
      }
    }
  } finally {
    for (const h of handles.values()) await h.close();
  }
}
