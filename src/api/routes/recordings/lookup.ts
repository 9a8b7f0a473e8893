import { NotFoundError } from '../../../domain/errors.js';
import type { Recording } from '../../../domain/types.js';
import type { RecordingStore } from './options.js';

/** The recording with this id; a 404 when there is none. */
export function requireRecording(store: Pick<RecordingStore, 'getRecording'>, id: string): Recording {
  const rec = store.getRecording(id);
  if (!rec) throw new NotFoundError('recording', id);
  return rec;
}
