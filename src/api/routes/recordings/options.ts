import type { MintPlayback } from '../../../domain/present.js';
import type { Store } from '../../../store/store.js';

export interface RecordingRoutesOptions {
  store: Store;
  /** Directory the recordings' file names are relative to. */
  storageDir: string;
  /** Playback tickets for the recordings' playback_url (src/api/routes/playback.ts); absent: null. */
  mintPlayback?: MintPlayback;
}
