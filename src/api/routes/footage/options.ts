import type { FootageFrames } from '../../../media/footage/frames.js';
import type { TicketSigner } from '../../../media/ticket.js';
import type { Device } from '../../../domain/types.js';
import type { FootageStatus } from '../../../media/footage/service.js';
import type { IndexedFootageFile } from '../../../store/footage.js';

/** What the footage routes read: the devices, the footage index, and continuous recording's state. */
export interface FootageRoutesStore {
  getDevice(id: string): Device | null;
  footageIn(deviceId: string, startMs: number, endMs: number): IndexedFootageFile[];
  footageFile(id: number): IndexedFootageFile | null;
}

/** Continuous recording as the routes see it; null when it is off (recording.continuous.enabled). */
export interface FootageAccess {
  /** recording.continuous.storage_dir: the footage files' names are relative to it. */
  root: string;
  status(): FootageStatus;
  /** Footage tickets, the credential of a window's playback_url. */
  tickets: Pick<TicketSigner, 'issueFootage' | 'verifyFootage'>;
  /** Pictures of moments of footage. */
  frames: Pick<FootageFrames, 'frame'>;
  /** How long a playback_url is accepted (recording.playback_ttl_s). */
  playbackTtlS: number;
  now?: () => number;
}

export interface FootageRoutesOptions {
  store: FootageRoutesStore;
  footage: FootageAccess | null;
}
