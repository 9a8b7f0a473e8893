import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { createHash } from 'node:crypto';
import type { IndexedFootageFile } from '../../store/footage.js';
import { MediaFormatError } from '../errors.js';
import { findBox, readBoxes, readTfhd, readTrun } from '../fmp4/reader.js';
import { firstFragment, placedFragments, type PlannedFragment } from './range-plan.js';
import { readBytes } from './read-bytes.js';

// The picture of a moment of footage, for a timeline being scrubbed: the keyframe at or before it,
// read from the footage file (its first video sample, and the parameter sets of the file's init
// segment), decoded to a JPEG by the still-picture decoders the snapshots use (bounded there), and
// kept: every moment within one group of pictures gives the same picture, so scrubbing across it
// decodes once. Pictures are kept in memory up to maxCachedBytes, the oldest going first.

export type FootageCodec = 'h264' | 'hevc';
export type DecodePicture = (format: FootageCodec, annexB: Buffer, width: number | null) => Promise<Buffer>;

export interface FootagePicture {
  jpeg: Buffer;
  /** Wall clock of the keyframe pictured, ms. */
  atMs: number;
  etag: string;
}

export interface FootageFramesOptions {
  root: string;
  /** A device's indexed files overlapping [startMs, endMs). */
  files(deviceId: string, startMs: number, endMs: number): IndexedFootageFile[];
  decode: DecodePicture;
  maxCachedBytes?: number;
}

export interface FootageFramesStats {
  decodes: number;
  cacheHits: number;
  coalesced: number;
  cachedBytes: number;
}

/** How far back the keyframe of a moment is looked for (a long GOP, a fragment cut at 10 s). */
const LOOK_BACK_MS = 120_000;
const START_CODE = Buffer.from([0, 0, 0, 1]);
const VIDEO_TRACK = 1;

/** `length` bytes at `offset` of a footage file, all of them: the index says they are there. */
async function readIndexed(handle: FileHandle, offset: number, length: number): Promise<Buffer> {
  const bytes = await readBytes(handle, offset, length);
  if (bytes.length < length) throw new MediaFormatError('bad_box', 'a footage file is shorter than its index says');
  return bytes;
}

/** The codec and parameter sets (SPS/PPS, and VPS for H.265) of an init segment's video sample entry. */
export function parameterSetsOfInit(init: Buffer): { codec: FootageCodec; sets: Buffer[] } {
  const boxes = readBoxes(init);
  const avcC = findBox(boxes, 'avcC');
  if (avcC) {
    const b = avcC.body;
    const sets: Buffer[] = [];
    let at = 5;
    for (const countMask of [0x1f, 0xff]) {
      const count = (b[at] ?? 0) & countMask;
      at++;
      for (let i = 0; i < count; i++) {
        const len = b.readUInt16BE(at);
        sets.push(b.subarray(at + 2, at + 2 + len));
        at += 2 + len;
      }
    }
    return { codec: 'h264', sets };
  }
  const hvcC = findBox(boxes, 'hvcC');
  if (!hvcC) throw new MediaFormatError('bad_sample', 'the init segment has no avcC or hvcC');
  const b = hvcC.body;
  const sets: Buffer[] = [];
  let at = 23;
  const arrays = b[22] ?? 0;
  for (let a = 0; a < arrays; a++) {
    const count = b.readUInt16BE(at + 1);
    at += 3;
    for (let i = 0; i < count; i++) {
      const len = b.readUInt16BE(at);
      sets.push(b.subarray(at + 2, at + 2 + len));
      at += 2 + len;
    }
  }
  return { codec: 'hevc', sets };
}

/** A sample's NAL units (each after a 4-byte length, as the muxer writes them). */
export function nalUnitsOf(sample: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at + 4 <= sample.length;) {
    const len = sample.readUInt32BE(at);
    if (len === 0 || at + 4 + len > sample.length)
      throw new MediaFormatError('bad_sample', 'a NAL unit runs past its sample');
    out.push(sample.subarray(at + 4, at + 4 + len));
    at += 4 + len;
  }
  return out;
}

export class FootageFrames {
  readonly stats: FootageFramesStats = { decodes: 0, cacheHits: 0, coalesced: 0, cachedBytes: 0 };
  private readonly cache = new Map<string, FootagePicture>();
  private readonly running = new Map<string, Promise<FootagePicture>>();
  private readonly maxCachedBytes: number;

  constructor(private readonly opts: FootageFramesOptions) {
    this.maxCachedBytes = opts.maxCachedBytes ?? 16 * 1024 * 1024;
  }

  /** The picture of `atMs`, `width` pixels wide (null: as recorded); null when there is no footage of that moment. */
  async frame(deviceId: string, atMs: number, width: number | null): Promise<FootagePicture | null> {
    const all = placedFragments(this.opts.files(deviceId, atMs - LOOK_BACK_MS, atMs + 1));
    const i = firstFragment(all, atMs);
    const keyframe = all[i];
    if (!keyframe || keyframe.startMs > atMs) return null;
    const key = `${keyframe.file.name}#${keyframe.fragment.offset}@${width ?? 'full'}`;
    const cached = this.cache.get(key);
    if (cached) {
      this.stats.cacheHits++;
      // Most recently used last: the oldest goes first when room is needed.
      this.cache.delete(key);
      this.cache.set(key, cached);
      return cached;
    }
    const running = this.running.get(key);
    if (running) {
      this.stats.coalesced++;
      return running;
    }
    const made = this.make(keyframe, width)
      .then((picture) => {
        this.remember(key, picture);
        return picture;
      })
      .finally(() => this.running.delete(key));
    this.running.set(key, made);
    return made;
  }

  private async make(keyframe: PlannedFragment, width: number | null): Promise<FootagePicture> {
    const { file, fragment } = keyframe;
    const handle = await open(path.join(this.opts.root, file.name), 'r');
    let annexB: Buffer;
    let codec: FootageCodec;
    try {
      const parameterSets = parameterSetsOfInit(await readIndexed(handle, 0, file.initBytes));
      codec = parameterSets.codec;
      const moofBytes = (await readIndexed(handle, fragment.offset, 4)).readUInt32BE(0);
      const moof = await readIndexed(handle, fragment.offset, moofBytes);
      const traf = findBox(readBoxes(moof), 'moof')?.children.find(
        (t) => t.type === 'traf' && readTfhd(findBox(t.children, 'tfhd') ?? t).trackId === VIDEO_TRACK,
      );
      const trun = traf && findBox(traf.children, 'trun');
      if (!trun) throw new MediaFormatError('bad_box', `${file.name}: a fragment without video`);
      const { dataOffset, samples } = readTrun(trun);
      const size = samples[0]?.size;
      if (dataOffset === null || !size)
        throw new MediaFormatError('bad_box', `${file.name}: a video run without offset or size`);
      const nalus = nalUnitsOf(await readIndexed(handle, fragment.offset + dataOffset, size));
      annexB = Buffer.concat([...parameterSets.sets, ...nalus].flatMap((n) => [START_CODE, n]));
    } finally {
      await handle.close();
    }
    this.stats.decodes++;
    const jpeg = await this.opts.decode(codec, annexB, width);
    return {
      jpeg,
      atMs: keyframe.startMs,
      etag: `"${createHash('sha256').update(jpeg).digest('base64url').slice(0, 27)}"`,
    };
  }

  private remember(key: string, picture: FootagePicture): void {
    if (picture.jpeg.length > this.maxCachedBytes) return;
    for (const [k, old] of this.cache) {
      if (this.stats.cachedBytes + picture.jpeg.length <= this.maxCachedBytes) break;
      this.cache.delete(k);
      this.stats.cachedBytes -= old.jpeg.length;
    }
    this.cache.set(key, picture);
    this.stats.cachedBytes += picture.jpeg.length;
  }
}
