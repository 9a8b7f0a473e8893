import type { Box, Frame, RawDetection } from './types.js';

/** What the main thread sends a detector worker. */
export interface CheckMessage {
  type: 'check';
  id: number;
  frames: Frame[];
  motion: Box | null;
  /** Send the frames back scaled down to at least this width (shrinkFrame); null: not at all. */
  keptWidth: number | null;
}

/** What a detector worker sends back. */
export type WorkerMessage =
  | { type: 'ready'; inputSize: number }
  | { type: 'load-failed'; message: string }
  | { type: 'result'; id: number; frames: RawDetection[][]; kept: Frame[] }
  | { type: 'failed'; id: number; message: string; frameError: boolean };

export interface WorkerConfig {
  modelDir: string | null;
  floorScore: number;
}

export function isWorkerMessage(value: unknown): value is WorkerMessage {
  if (typeof value !== 'object' || value === null) return false;
  const type = (value as { type?: unknown }).type;
  return type === 'ready' || type === 'load-failed' || type === 'result' || type === 'failed';
}
