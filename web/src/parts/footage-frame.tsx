import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api } from '../api.js';

// The picture of a moment of footage while the timeline is dragged: one request at a time, and
// when it is answered, the moment the timeline is at by then (the moments passed over meanwhile
// are never asked for). The last picture stays until the next one is there.

type Shown = { kind: 'loading' } | { kind: 'image'; url: string } | { kind: 'none' };

/** Wide enough for a phone's screen and a desktop's stage; the gateway keeps each size it made. */
const FRAME_WIDTH = 640;

export function FootageFrame(props: { api: Api; deviceId: string; atMs: number; alt: string }) {
  const { api, deviceId } = props;
  const [shown, setShown] = useState<Shown>({ kind: 'loading' });
  const wanted = useRef(props.atMs);
  const load = useRef<(() => void) | null>(null);
  wanted.current = props.atMs;

  useEffect(() => {
    let busy = false;
    let stopped = false;
    let current: string | null = null;
    const abort = new AbortController();
    const next = async () => {
      if (busy || stopped) return;
      busy = true;
      const at = wanted.current;
      try {
        const url = await api.objectUrl(api.footageFramePath(deviceId, at, FRAME_WIDTH), abort.signal);
        if (stopped) {
          if (url) URL.revokeObjectURL(url);
          return;
        }
        if (url) {
          if (current) URL.revokeObjectURL(current);
          current = url;
          setShown({ kind: 'image', url });
        } else setShown({ kind: 'none' });
      } catch {
        if (!stopped) setShown({ kind: 'none' });
      } finally {
        busy = false;
      }
      if (wanted.current !== at) void next();
    };
    load.current = () => void next();
    return () => {
      stopped = true;
      abort.abort();
      load.current = null;
      if (current) URL.revokeObjectURL(current);
    };
  }, [api, deviceId]);

  useEffect(() => load.current?.(), [props.atMs]);

  return (
    <div class="picture" data-testid="footage-frame">
      {shown.kind === 'image' ? <img src={shown.url} alt={props.alt} /> : null}
      {shown.kind === 'none' ? <span class="placeholder">No footage at this moment</span> : null}
    </div>
  );
}
