import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type Api } from '../api.js';

// A picture of the API (a camera's still, an event's thumbnail): an <img> cannot send the token,
// so it is fetched and shown from a blob: URL. With refreshMs it is fetched again while it is on
// screen and the tab is visible; the old picture stays until the new one is there.

/** `offline`: the camera did not answer, which the placeholder says instead of props.placeholder. */
type Shown = { kind: 'loading' } | { kind: 'image'; url: string } | { kind: 'none'; offline: boolean };

/** How often, and how many times, a picture that is not there yet (404) is asked for again. */
const MISSING_RETRY_MS = 3_000;

export function AuthImage(props: {
  api: Api;
  path: string;
  alt: string;
  refreshMs?: number;
  /** Ask again after a 404 this many times: a clip's thumbnail is written just after its clip. */
  missingRetries?: number;
  class?: string;
  placeholder?: string;
  testId?: string;
  /** The picture's own size once shown (drawing on it needs its aspect ratio). */
  onSize?: (width: number, height: number) => void;
}) {
  const [shown, setShown] = useState<Shown>({ kind: 'loading' });
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    let visible = true;
    let stopped = false;
    let current: string | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let retries = props.missingRetries ?? 0;
    const abort = new AbortController();
    const load = async () => {
      if (stopped) return;
      if (visible && document.visibilityState === 'visible') {
        try {
          const url = await props.api.objectUrl(props.path, abort.signal);
          if (stopped) {
            if (url) URL.revokeObjectURL(url);
            return;
          }
          if (url === null) {
            setShown({ kind: 'none', offline: false });
            if (!props.refreshMs && retries-- > 0) timer = setTimeout(() => void load(), MISSING_RETRY_MS);
          } else {
            setShown({ kind: 'image', url });
            if (current) URL.revokeObjectURL(current);
            current = url;
          }
        } catch (err) {
          if (stopped) return;
          if (current === null)
            setShown({ kind: 'none', offline: err instanceof ApiError && err.code === 'device_unavailable' });
        }
      }
      if (props.refreshMs && !stopped) timer = setTimeout(() => void load(), props.refreshMs);
    };
    const observer =
      typeof IntersectionObserver === 'function'
        ? new IntersectionObserver((entries) => {
            visible = entries.some((e) => e.isIntersecting);
          })
        : null;
    if (box.current && observer) observer.observe(box.current);
    void load();
    return () => {
      stopped = true;
      abort.abort();
      clearTimeout(timer);
      observer?.disconnect();
      if (current) URL.revokeObjectURL(current);
    };
  }, [props.api, props.path, props.refreshMs, props.missingRetries]);

  return (
    <div class={`picture ${props.class ?? ''}`} ref={box} data-testid={props.testId}>
      {shown.kind === 'image' ? (
        <img
          src={shown.url}
          alt={props.alt}
          onLoad={(e) => props.onSize?.(e.currentTarget.naturalWidth, e.currentTarget.naturalHeight)}
        />
      ) : null}
      {shown.kind === 'none' ? (
        <span class="placeholder">
          {shown.offline ? 'Camera offline: no picture' : (props.placeholder ?? 'No picture')}
        </span>
      ) : null}
      {shown.kind === 'loading' ? <span class="placeholder" aria-hidden="true" /> : null}
    </div>
  );
}
