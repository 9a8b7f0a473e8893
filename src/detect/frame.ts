import { FrameError } from './errors.js';
import type { Region } from './regions.js';
import type { Frame } from './types.js';

/** 3 (RGB) or 4 (RGBA) bytes a pixel, from the frame's size; FrameError when the bytes do not fit. */
export function channelsOf(frame: Frame): 3 | 4 {
  const { width, height, data } = frame;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new FrameError(`bad frame size ${width}x${height}`);
  }
  const pixels = width * height;
  if (data.length === pixels * 3) return 3;
  if (data.length === pixels * 4) return 4;
  throw new FrameError(
    `frame of ${width}x${height} has ${data.length} bytes, not RGB (${pixels * 3}) or RGBA (${pixels * 4})`,
  );
}

/** The pixels of a region as a frame of their own (same bytes per pixel). */
export function cropFrame(frame: Frame, region: Region): Frame {
  const channels = channelsOf(frame);
  const { x, y, size } = region;
  if (x < 0 || y < 0 || size < 1 || x + size > frame.width || y + size > frame.height) {
    throw new FrameError(`region ${size}px at ${x},${y} is outside the ${frame.width}x${frame.height} frame`);
  }
  const row = size * channels;
  const out = new Uint8Array(row * size);
  for (let r = 0; r < size; r++) {
    const from = ((y + r) * frame.width + x) * channels;
    out.set(frame.data.subarray(from, from + row), r * row);
  }
  return { data: out, width: size, height: size };
}

/**
 * The frame scaled down by the largest whole factor that keeps it at least `minWidth` wide (each
 * output byte the mean of its factor × factor block), or the frame itself when no factor > 1 does.
 * A whole factor is one pass over the bytes with no interpolation (about 15 ms for 1280×720 here:
 * the detector's threads run it, not the event loop); what is kept stays at least as wide as what
 * it is kept for (the thumbnail, scaled again when encoded).
 */
export function shrinkFrame(frame: Frame, minWidth: number): Frame {
  const channels = channelsOf(frame);
  const factor = Math.min(Math.floor(frame.width / Math.max(1, minWidth)), frame.height);
  if (factor <= 1) return frame;
  const width = Math.floor(frame.width / factor);
  const height = Math.floor(frame.height / factor);
  const src = frame.data;
  const out = new Uint8Array(width * height * channels);
  const area = factor * factor;
  const half = area >> 1;
  const rowBytes = frame.width * channels;
  const step = factor * channels;
  let to = 0;
  for (let y = 0; y < height; y++) {
    const top = y * factor * rowBytes;
    for (let x = 0; x < width; x++) {
      const corner = top + x * step;
      for (let c = 0; c < channels; c++) {
        let sum = 0;
        for (let dy = 0, row = corner + c; dy < factor; dy++, row += rowBytes)
          for (let at = row, end = row + step; at < end; at += channels) sum += src[at]!;
        out[to++] = ((sum + half) / area) | 0;
      }
    }
  }
  return { data: out, width, height };
}
