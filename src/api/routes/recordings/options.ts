import type { MintPlayback } from '../../../domain/present.js';
import type { Device, Page, Recording } from '../../../domain/types.js';
import type { RecordingFilter } from '../../../store/media.js';

/** What the recording routes read of the store: a device's recordings listed, and one looked up. */
export interface RecordingStore {
  getDevice(id: string): Device | null;
  listRecordings(f: RecordingFilter): Page<Recording>;
  getRecording(id: string): Recording | null;
}

export interface RecordingRoutesOptions {
  store: RecordingStore;
  /** Directory the recordings' file names are relative to. */
  storageDir: string;
  /** Playback tickets for the recordings' playback_url (src/api/routes/playback.ts); absent: null. */
  mintPlayback?: MintPlayback;
}
