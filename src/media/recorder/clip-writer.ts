import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { commitFile } from '../../platform/durable-files.js';
import { assembleArgs, concatList, thumbnailArgs, type ConcatEntry } from './ffmpeg-args.js';
import { runToEnd } from './process.js';
import { FfmpegError } from './errors.js';
import { seamlessDurations, segmentStartSeconds } from './segment-start.js';

// Segments in RAM → one MP4 clip (and a JPEG) in the storage directory, crash-safe: ffmpeg writes a
// temporary name, which is fsynced and renamed; the caller writes the database row only after
// that. A crash leaves at worst a `.tmp` (removed at start) or a clip without a row (removed at
// start as an orphan), never a row without its whole clip.

export type AudioMode = 'copy' | 'aac' | 'none';

/**
 * What to do with the audio of a segment of unknown origin (crash recovery), read from ffmpeg's description of the input (ffmpeg
 * without an output lists the streams and exits 1; ffprobe is not always installed beside it).
 * AAC goes into MP4 as is; G.711 and other audio MP4 cannot hold are encoded to AAC.
 */
export async function audioModeOf(ffmpegPath: string, segmentFile: string): Promise<AudioMode> {
  let text: string;
  try {
    text = (await runToEnd(ffmpegPath, ['-hide_banner', '-nostdin', '-i', segmentFile], { timeoutMs: 10_000 })).stderr;
  } catch (err) {
    text = err instanceof FfmpegError ? err.stderr : '';
  }
  const codec = /Stream #\d+:\d+[^:]*: Audio: (\w+)/.exec(text)?.[1];
  if (!codec) return 'none';
  return codec === 'aac' ? 'copy' : 'aac';
}

/** What to do with the audio of footage the recorder muxed: AAC goes in as is, G.711 is encoded to AAC. */
export function audioModeFor(codec: 'AAC' | 'G711' | null): AudioMode {
  return codec === 'AAC' ? 'copy' : codec === 'G711' ? 'aac' : 'none';
}

export interface ClipJob {
  ffmpegPath: string;
  /** Where the concat list goes (the RAM directory of the segments). */
  scratchDir: string;
  /** The segments (absolute paths), in order; the first starts on a keyframe (see segment-start.ts for their durations). */
  segments: readonly ConcatEntry[];
  durationS: number;
  audio: AudioMode;
  storageDir: string;
  /** Relative to storageDir, e.g. `dev_x/rec_y.mp4`; the thumbnail is the same with `.jpg`. */
  fileName: string;
  timeoutMs?: number;
}

export interface WrittenClip {
  sizeBytes: number;
}

export function thumbnailNameOf(fileName: string): string {
  return fileName.replace(/\.mp4$/, '.jpg');
}

export async function writeClip(job: ClipJob): Promise<WrittenClip> {
  const final = path.join(job.storageDir, job.fileName);
  await fsp.mkdir(path.dirname(final), { recursive: true, mode: 0o700 });
  const base = path.basename(job.fileName, '.mp4');
  const list = path.join(job.scratchDir, `.${base}.ffconcat`);
  const tmp = path.join(path.dirname(final), `.${base}.mp4.tmp`);
  const starts = await Promise.all(
    job.segments.map(async (s) => segmentStartSeconds(await fsp.readFile(s.path).catch(() => Buffer.alloc(0)))),
  );
  await fsp.writeFile(list, concatList(seamlessDurations(job.segments, starts)));
  try {
    await runToEnd(
      job.ffmpegPath,
      assembleArgs({ listFile: list, output: tmp, durationS: job.durationS, audio: job.audio }),
      { timeoutMs: job.timeoutMs ?? 120_000 },
    );
    await commitFile(tmp, final);
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    throw err;
  } finally {
    await fsp.rm(list, { force: true });
  }
  const { size } = await fsp.stat(final);
  return { sizeBytes: size };
}

/**
 * The clip's JPEG beside it, from `atS` seconds in (the event's moment). Written after the clip's
 * row, so a listed clip does not wait for it; a nicety: failing to make one never loses the clip.
 */
export async function writeThumbnail(job: {
  ffmpegPath: string;
  storageDir: string;
  fileName: string;
  atS: number;
  durationS: number;
}): Promise<boolean> {
  const clip = path.join(job.storageDir, job.fileName);
  const final = path.join(job.storageDir, thumbnailNameOf(job.fileName));
  const tmp = path.join(path.dirname(final), `.${path.basename(final)}.tmp`);
  try {
    const atS = Math.max(0, Math.min(job.atS, job.durationS - 0.5));
    await runToEnd(job.ffmpegPath, thumbnailArgs({ input: clip, offsetS: atS, output: tmp, width: 640 }), {
      timeoutMs: 30_000,
    });
    await commitFile(tmp, final);
    // Retention may have removed the clip meanwhile (a disk it cannot free otherwise).
    if (!(await fsp.stat(clip).catch(() => null))) {
      await fsp.rm(final, { force: true });
      return false;
    }
    return true;
  } catch {
    await fsp.rm(tmp, { force: true });
    return false;
  }
}

/**
 * A thumbnail made elsewhere (the detector's frame with its boxes), beside its clip; false when it could not be
 * written.
 */
export async function writeThumbnailJpeg(storageDir: string, fileName: string, jpeg: Uint8Array): Promise<boolean> {
  const final = path.join(storageDir, thumbnailNameOf(fileName));
  const tmp = path.join(path.dirname(final), `.${path.basename(final)}.tmp`);
  try {
    await fsp.writeFile(tmp, jpeg, { mode: 0o600 });
    await commitFile(tmp, final);
    return true;
  } catch {
    await fsp.rm(tmp, { force: true });
    return false;
  }
}

/** Removes a clip and its thumbnail (retention, or a clip whose row could not be written). */
export async function removeClip(storageDir: string, fileName: string): Promise<void> {
  await fsp.rm(path.join(storageDir, fileName), { force: true });
  await fsp.rm(path.join(storageDir, thumbnailNameOf(fileName)), { force: true });
}
