import { suppressOverlaps } from './boxes.js';
import { cropFrame } from './frame.js';
import { planRegions, toFrameBox } from './regions.js';
import type { Box, Detector, Frame, RawDetection } from './types.js';

/**
 * Looks at one frame the way a check does: the planned square regions (around the moving area, or
 * tiles of the whole frame), one inference each, one after another, boxes mapped back to 0–1
 * coordinates of the frame and duplicates from overlapping regions merged.
 */
export async function inspectFrame(detector: Detector, frame: Frame, motion: Box | null): Promise<RawDetection[]> {
  const regions = planRegions(frame.width, frame.height, motion, { inputSize: detector.inputSize });
  const found: RawDetection[] = [];
  for (const region of regions) {
    const whole = region.x === 0 && region.y === 0 && region.size === frame.width && region.size === frame.height;
    const part = whole ? frame : cropFrame(frame, region);
    for (const d of await detector.detect(part))
      found.push({ ...d, box: toFrameBox(region, d.box, frame.width, frame.height) });
  }
  return suppressOverlaps(found, (d) => d.label);
}
