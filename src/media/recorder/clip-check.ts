import { checkArgs, decodedSeconds } from './ffmpeg-args.js';
import { runToEnd } from './process.js';
import { FfmpegError } from './errors.js';

// Whether a clip file left by a crash is whole: it opens, every video frame decodes, and it lasts
// as long as the clip was meant to. Done with ffmpeg itself (configured as ffmpeg.path; ffprobe is
// not always installed beside it). A half-written MP4 fails to open (its index comes last); one
// cut short decodes too little.

export type ClipCheck = { ok: true; durationS: number } | { ok: false; reason: string };

/** A clip may fall short of its planned length by at most this (the last GOP's rounding). */
const SHORT_TOLERANCE_S = 1;

export async function checkClip(
  ffmpegPath: string,
  file: string,
  expectedS: number,
  timeoutMs = 120_000,
): Promise<ClipCheck> {
  let stdout: string;
  let stderr: string;
  try {
    ({ stdout, stderr } = await runToEnd(ffmpegPath, checkArgs(file), { timeoutMs }));
  } catch (err) {
    return { ok: false, reason: err instanceof FfmpegError ? err.message : String(err) };
  }
  if (stderr.trim()) return { ok: false, reason: `decoding errors: ${stderr.trim().split('\n')[0]?.slice(0, 200)}` };
  const durationS = decodedSeconds(stdout);
  if (durationS === null) return { ok: false, reason: 'no video decoded' };
  if (durationS < expectedS - SHORT_TOLERANCE_S)
    return { ok: false, reason: `decodes ${durationS.toFixed(1)} s of ${expectedS.toFixed(1)} s` };
  return { ok: true, durationS };
}
