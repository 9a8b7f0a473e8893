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
