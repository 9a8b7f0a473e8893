// Which clips retention removes. Pure: the caller lists the clips, measures free space, removes
// what the plan names (file and row together) and runs it again when space drops below the floor.
//
// Clips go oldest first, whatever the limit that asks for it, so what remains is always the most
// recent footage; a busy clip (being written or read) is skipped and never removed, and may leave
// a limit unmet.

const DAY_MS = 86_400_000;

export interface RetainedClip {
  id: string;
  startedAt: number;
  sizeBytes: number;
}

export interface RetentionInput {
  clips: readonly RetainedClip[];
  now: number;
  maxAgeDays: number;
  /** Most bytes all clips may take together (busy ones included: they take space too); null: no limit. */
  maxBytes: number | null;
  freeBytes: number;
  minFreeBytes: number;
  busy: ReadonlySet<string>;
}

export interface RetentionPlan {
  /** Oldest first; the reason is the first limit, in the order age, bytes, free, that needs it gone. */
  remove: Array<{ id: string; reason: 'age' | 'bytes' | 'free' }>;
  /** bytes still missing to reach min_free after removing everything allowed (0 when met) */
  shortfallBytes: number;
}

export function planRetention(input: RetentionInput): RetentionPlan {
  const { now, maxAgeDays, maxBytes, freeBytes, minFreeBytes, busy } = input;
  finite('now', now);
  if (!(maxAgeDays > 0)) throw new RangeError(`maxAgeDays must be > 0, got ${maxAgeDays}`);
  if (maxBytes !== null) nonNegative('maxBytes', maxBytes);
  finite('freeBytes', freeBytes);
  nonNegative('minFreeBytes', minFreeBytes);

  const oldestFirst = [...input.clips].sort(byAge);
  const cutoff = now - maxAgeDays * DAY_MS;
  let totalBytes = 0;
  for (const clip of oldestFirst) {
    finite(`startedAt of ${clip.id}`, clip.startedAt);
    nonNegative(`sizeBytes of ${clip.id}`, clip.sizeBytes);
    totalBytes += clip.sizeBytes;
  }
  let free = freeBytes;

  const remove: RetentionPlan['remove'] = [];
  for (const clip of oldestFirst) {
    const reason =
      clip.startedAt < cutoff
        ? 'age'
        : maxBytes !== null && totalBytes > maxBytes
          ? 'bytes'
          : free < minFreeBytes
            ? 'free'
            : null;
    // Every clip after this one is newer and the limits only get closer to met: done.
    if (reason === null) break;
    if (busy.has(clip.id)) continue;
    remove.push({ id: clip.id, reason });
    totalBytes -= clip.sizeBytes;
    free += clip.sizeBytes;
  }
  return { remove, shortfallBytes: Math.max(0, minFreeBytes - free) };
}

function byAge(a: RetainedClip, b: RetainedClip): number {
  // Ids by code unit, not locale: the same order on every machine.
  return a.startedAt - b.startedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function finite(name: string, value: number): void {
  if (!Number.isFinite(value)) throw new RangeError(`${name} must be a finite number, got ${value}`);
}

function nonNegative(name: string, value: number): void {
  if (!(Number.isFinite(value) && value >= 0))
    throw new RangeError(`${name} must be a finite number ≥ 0, got ${value}`);
}
