import type { StreamProfile } from '../../domain/types.js';

// Where a footage file lives under the footage directory: one folder per camera and UTC day, the
// file named by its profile and its first sample's wall clock, so that a file the index lacks
// (written before a crash) tells by its name whose and when it is.

export interface FootageFileId {
  deviceId: string;
  profile: StreamProfile;
  startMs: number;
}

const NAME = /^([A-Za-z0-9_-]{1,128})\/(\d{4}-\d{2}-\d{2})\/(main|sub)-(\d{1,15})\.mp4$/;

export function footageFileName(id: FootageFileId): string {
  const day = new Date(id.startMs).toISOString().slice(0, 10);
  return `${id.deviceId}/${day}/${id.profile}-${id.startMs}.mp4`;
}

/** The camera, profile and start a footage file's name says; null for any other name. */
export function parseFootageFileName(name: string): FootageFileId | null {
  const m = NAME.exec(name);
  if (!m) return null;
  const startMs = Number(m[4]);
  const id: FootageFileId = { deviceId: m[1] as string, profile: m[3] as StreamProfile, startMs };
  return footageFileName(id) === name ? id : null;
}
