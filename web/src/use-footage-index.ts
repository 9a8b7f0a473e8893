import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api } from './api.js';
import { chunksOf, mergeSpans, type TimeSpan } from './timeline-view.js';
import type { EventType } from './types.js';

// What the timeline draws for the window it shows: the spans of footage kept and the event clips,
// asked for by day-long slices (the API's longest window) and kept while the screen is open, so
// that moving the view asks only for the days it newly shows. The slice holding "now" is asked for
// again every half minute: footage and events keep coming.

export interface TimelineEvent {
  id: string;
  type: EventType;
  startMs: number;
  endMs: number;
}

interface Slice {
  spans: TimeSpan[];
  events: TimelineEvent[];
  fetchedAt: number;
}

/** The API's longest window: a day. */
const SLICE_MS = 86_400_000;
/** How long the slice holding "now" is trusted before it is asked for again. */
const LIVE_SLICE_MS = 30_000;
/** Pages of clips read per day at most (200 each): a camera with more events shows the first ones. */
const MAX_EVENT_PAGES = 5;

async function fetchSlice(api: Api, deviceId: string, startMs: number, endMs: number, signal: AbortSignal) {
  const spans = await api.footageSpans(deviceId, startMs, endMs, signal);
  const events: TimelineEvent[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_EVENT_PAGES; page++) {
    const clips = await api.recordings(deviceId, {
      start_date: new Date(startMs).toISOString(),
      end_date: new Date(endMs - 1).toISOString(),
      limit: 200,
      ...(cursor ? { cursor } : {}),
    });
    for (const c of clips.data) {
      const start = Date.parse(c.started_at);
      events.push({ id: c.id, type: c.event_type, startMs: start, endMs: start + c.duration_s * 1000 });
    }
    if (!clips.next_cursor || signal.aborted) break;
    cursor = clips.next_cursor;
  }
  return { spans: spans.map((s) => ({ startMs: Date.parse(s.start), endMs: Date.parse(s.end) })), events };
}

export function useFootageIndex(
  api: Api,
  deviceId: string,
  window: { startMs: number; endMs: number },
  epoch: number,
): { spans: TimeSpan[]; events: TimelineEvent[]; loading: boolean; error: string | null } {
  // Slices of this camera, fetched since the gateway was last reachable (epoch).
  const cache = useRef({ owner: '', slices: new Map<number, Slice>() });
  const owner = `${deviceId}|${epoch}`;
  if (cache.current.owner !== owner) cache.current = { owner, slices: new Map() };
  const [, setVersion] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  const wanted = chunksOf(window.startMs, Math.min(window.endMs, Date.now() + 60_000), SLICE_MS);
  const key = wanted.map((c) => c.startMs).join(',');

  useEffect(() => {
    const timer = setInterval(() => setTick((n) => n + 1), LIVE_SLICE_MS);
    return () => clearInterval(timer);
  }, []);

  useEffect(() => {
    const abort = new AbortController();
    const now = Date.now();
    const { slices } = cache.current;
    const stale = key
      .split(',')
      .filter(Boolean)
      .map(Number)
      .filter((startMs) => {
        const have = slices.get(startMs);
        return !have || (startMs + SLICE_MS > have.fetchedAt && now - have.fetchedAt >= LIVE_SLICE_MS);
      });
    void (async () => {
      for (const startMs of stale) {
        try {
          const slice = await fetchSlice(api, deviceId, startMs, startMs + SLICE_MS, abort.signal);
          if (abort.signal.aborted) return;
          slices.set(startMs, { ...slice, fetchedAt: Date.now() });
          setError(null);
          setVersion((v) => v + 1);
        } catch (err) {
          if (abort.signal.aborted) return;
          setError(err instanceof Error ? err.message : 'The footage could not be listed.');
          return;
        }
      }
    })();
    return () => abort.abort();
  }, [api, deviceId, owner, key, tick]);

  const have = wanted.map((c) => cache.current.slices.get(c.startMs)).filter((s): s is Slice => s !== undefined);
  const seen = new Set<string>();
  const events = have
    .flatMap((s) => s.events)
    .filter((e) => !seen.has(e.id) && seen.add(e.id))
    .sort((a, b) => a.startMs - b.startMs);
  return {
    spans: mergeSpans(have.flatMap((s) => s.spans)),
    events,
    loading: have.length < wanted.length,
    error,
  };
}
