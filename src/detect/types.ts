/** A decoded picture: RGB (3 bytes a pixel) or RGBA (4), rows top to bottom, no padding. */
export interface Frame {
  data: Uint8Array;
  width: number;
  height: number;
}

/** Frames of a camera as they come: `next()` answers null once there are no more (see `ended`). */
export interface FrameSource {
  next(): Promise<Frame | null>;
  /** Why the frames ended before all were taken (the stream stopped, the decoder failed), or null. */
  readonly ended: string | null;
  /** Stops taking frames. */
  close(): void;
}

/** A rectangle in 0–1 coordinates of a frame (x, y: its top-left corner). */
export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** What a model found: its own class name (COCO's "person", "car" …), a score 0–1 and where. */
export interface RawDetection {
  label: string;
  score: number;
  box: Box;
}

export type Category = 'human' | 'vehicle';

/** A detection whose model class counts as one of ours (config detection.labels). */
export interface Detection extends RawDetection {
  category: Category;
}

/**
 * An object detector backend (tfjs-wasm CenterNet today; a Coral or Hailo backend would be another
 * implementation). detect() takes a frame of any size, scales it to the model's input itself, and
 * answers boxes in 0–1 coordinates of that frame, scores >= the backend's floor.
 */
export interface Detector {
  /** The model's square input side in pixels: regions smaller than this gain nothing. */
  readonly inputSize: number;
  detect(frame: Frame): Promise<RawDetection[]>;
  dispose(): void;
}
