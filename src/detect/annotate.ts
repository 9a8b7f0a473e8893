import { spawn } from 'node:child_process';
import { channelsOf } from './frame.js';
import type { Box, Frame } from './types.js';

/**
 * Draws a box's outline into a copy of the frame (RGB or RGBA), `thickness` pixels inside its
 * edges, clipped to the frame: the thumbnail shows what was found where.
 */
export function drawBox(frame: Frame, box: Box, colour: readonly [number, number, number], thickness: number): Frame {
  const channels = channelsOf(frame);
  const out = new Uint8Array(frame.data);
  const { width, height } = frame;
  const x1 = clampInt(box.x * width, 0, width - 1);
  const y1 = clampInt(box.y * height, 0, height - 1);
  const x2 = clampInt((box.x + box.w) * width - 1, x1, width - 1);
  const y2 = clampInt((box.y + box.h) * height - 1, y1, height - 1);
  const paint = (x: number, y: number) => {
    const at = (y * width + x) * channels;
    out[at] = colour[0];
    out[at + 1] = colour[1];
    out[at + 2] = colour[2];
  };
  for (let t = 0; t < thickness; t++) {
    const [top, bottom, left, right] = [y1 + t, y2 - t, x1 + t, x2 - t];
    if (top > bottom || left > right) break;
    for (let x = left; x <= right; x++) {
      paint(x, top);
      paint(x, bottom);
    }
    for (let y = top; y <= bottom; y++) {
      paint(left, y);
      paint(right, y);
    }
  }
  return { data: out, width, height };
}

function clampInt(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, Math.round(v)));
}

/** An RGB frame as a JPEG `width` pixels wide (ffmpeg: PPM in, MJPEG out), for a thumbnail. */
export function encodeJpeg(
  frame: Frame,
  opts: { ffmpegPath: string; width: number; timeoutMs?: number },
): Promise<Buffer> {
  if (channelsOf(frame) !== 3) return Promise.reject(new RangeError('encodeJpeg takes RGB frames'));
  const args = [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    '-f',
    'image2pipe',
    '-c:v',
    'ppm',
    '-i',
    'pipe:0',
    '-vf',
    `scale=${opts.width}:-2`,
    '-frames:v',
    '1',
    '-q:v',
    '4',
    '-f',
    'image2pipe',
    '-c:v',
    'mjpeg',
    'pipe:1',
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(opts.ffmpegPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 10_000);
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 2000) stderr += chunk.toString();
    });
    child.stdin.on('error', () => {});
    child.on('error', (err) => reject(new Error(`cannot run ${opts.ffmpegPath}: ${err.message}`)));
    child.on('close', (code) => {
      clearTimeout(timer);
      const jpeg = Buffer.concat(out);
      if (code === 0 && jpeg.length > 0) resolve(jpeg);
      else reject(new Error(`JPEG encoding failed: ${stderr.trim().split('\n')[0] || `exit ${code}`}`));
    });
    child.stdin.write(`P6\n${frame.width} ${frame.height}\n255\n`);
    child.stdin.end(frame.data);
  });
}
