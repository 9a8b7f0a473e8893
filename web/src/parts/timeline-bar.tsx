import { useEffect, useRef, useState } from 'preact/hooks';
import { momentText, tickText } from '../format.js';
import {
  clampView,
  fractionOf,
  keyStepMs,
  ticks,
  timeAt,
  zoomed,
  type Bounds,
  type TimeSpan,
  type View,
} from '../timeline-view.js';
import type { TimelineEvent } from '../use-footage-index.js';

// The footage timeline: a bar with the playhead fixed in its middle. Dragging it (mouse or finger)
// moves time under the playhead, a tap puts the tapped moment there, the wheel and a pinch zoom;
// as a slider it takes the arrow keys (a sixtieth of the bar), Page Up / Down (a quarter), Home /
// End (the oldest footage / now) and + / − (zoom). While it moves it asks for the picture of the
// moment ('scrub'); once it rests, the screen may play from there ('seek').

export type ViewChange = 'scrub' | 'seek' | 'zoom';

/** How long the keys must rest before a moved playhead counts as chosen. */
const KEYS_SETTLE_MS = 600;
/** A pointer that moved less than this is a tap. */
const TAP_PX = 5;

interface Gesture {
  startX: number;
  startView: View;
  moved: boolean;
  /** Two pointers: their distance when the second came down. */
  pinchFrom: number | null;
}

export function TimelineBar(props: {
  view: View;
  bounds: Bounds;
  spans: readonly TimeSpan[];
  events: readonly TimelineEvent[];
  cameraName: string;
  onView: (view: View, change: ViewChange) => void;
}) {
  const { view, bounds, onView } = props;
  const bar = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(360);
  const pointers = useRef(new Map<number, number>());
  const gesture = useRef<Gesture | null>(null);
  const keysTimer = useRef<ReturnType<typeof setTimeout>>(undefined);
  // What the keys' timer settles on: the view as it is when the keys have rested, not as it was
  // at the last key (a drag or a zoom may have come between).
  const settle = useRef(() => {});
  settle.current = () => onView(view, 'seek');

  useEffect(() => {
    const el = bar.current;
    if (!el) return;
    const observer = new ResizeObserver(() => setWidth(el.clientWidth || 360));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  useEffect(() => () => clearTimeout(keysTimer.current), []);

  const move = (next: View, change: ViewChange) => onView(clampView(next, bounds), change);

  const onPointerDown = (e: PointerEvent) => {
    clearTimeout(keysTimer.current);
    bar.current?.setPointerCapture(e.pointerId);
    pointers.current.set(e.pointerId, e.clientX);
    const xs = [...pointers.current.values()];
    gesture.current = {
      startX: e.clientX,
      startView: view,
      moved: xs.length > 1,
      pinchFrom: xs.length === 2 ? Math.abs((xs[0] as number) - (xs[1] as number)) || 1 : null,
    };
  };
  const onPointerMove = (e: PointerEvent) => {
    const g = gesture.current;
    if (!g || !pointers.current.has(e.pointerId)) return;
    pointers.current.set(e.pointerId, e.clientX);
    const xs = [...pointers.current.values()];
    if (g.pinchFrom !== null && xs.length === 2) {
      const apart = Math.abs((xs[0] as number) - (xs[1] as number)) || 1;
      move({ centerMs: g.startView.centerMs, spanMs: (g.startView.spanMs * g.pinchFrom) / apart }, 'zoom');
      return;
    }
    const dx = e.clientX - g.startX;
    if (Math.abs(dx) >= TAP_PX) g.moved = true;
    if (g.moved && g.pinchFrom === null)
      move({ ...g.startView, centerMs: g.startView.centerMs - (dx / width) * g.startView.spanMs }, 'scrub');
  };
  const onPointerUp = (e: PointerEvent) => {
    const g = gesture.current;
    pointers.current.delete(e.pointerId);
    if (!g || pointers.current.size > 0) return;
    gesture.current = null;
    if (g.pinchFrom !== null) return;
    if (!g.moved) {
      const box = bar.current?.getBoundingClientRect();
      const fraction = box ? (e.clientX - box.left) / box.width : 0.5;
      move({ ...view, centerMs: timeAt(view, fraction) }, 'seek');
    } else move(view, 'seek');
  };
  const onWheel = (e: WheelEvent) => {
    e.preventDefault();
    move(zoomed(view, Math.exp(e.deltaY * 0.002), bounds), 'zoom');
  };
  const onKeyDown = (e: KeyboardEvent) => {
    const step = keyStepMs(view) * (e.shiftKey ? 10 : 1);
    const to: Record<string, () => View> = {
      ArrowLeft: () => ({ ...view, centerMs: view.centerMs - step }),
      ArrowDown: () => ({ ...view, centerMs: view.centerMs - step }),
      ArrowRight: () => ({ ...view, centerMs: view.centerMs + step }),
      ArrowUp: () => ({ ...view, centerMs: view.centerMs + step }),
      PageDown: () => ({ ...view, centerMs: view.centerMs - view.spanMs / 4 }),
      PageUp: () => ({ ...view, centerMs: view.centerMs + view.spanMs / 4 }),
      Home: () => ({ ...view, centerMs: bounds.minMs }),
      End: () => ({ ...view, centerMs: bounds.maxMs }),
    };
    if (e.key === '+' || e.key === '=' || e.key === '-' || e.key === '_') {
      e.preventDefault();
      move(zoomed(view, e.key === '+' || e.key === '=' ? 0.5 : 2, bounds), 'zoom');
      return;
    }
    const next = to[e.key];
    if (!next) return;
    e.preventDefault();
    const moved = clampView(next(), bounds);
    onView(moved, 'scrub');
    clearTimeout(keysTimer.current);
    keysTimer.current = setTimeout(() => settle.current(), KEYS_SETTLE_MS);
  };

  const pct = (t: number) => `${(fractionOf(view, t) * 100).toFixed(3)}%`;
  const inView = (s: { startMs: number; endMs: number }) =>
    fractionOf(view, s.endMs) > 0 && fractionOf(view, s.startMs) < 1;
  const kept = props.spans.some((s) => s.startMs <= view.centerMs && view.centerMs < s.endMs);
  const futureFrom = Math.max(0, Math.min(1, fractionOf(view, Date.now())));

  return (
    <div
      class="timeline-bar"
      ref={bar}
      role="slider"
      tabIndex={0}
      aria-label={`Time in the footage of ${props.cameraName}`}
      aria-valuemin={Math.round(bounds.minMs / 1000)}
      aria-valuemax={Math.round(bounds.maxMs / 1000)}
      aria-valuenow={Math.round(view.centerMs / 1000)}
      aria-valuetext={`${momentText(view.centerMs)}${kept ? '' : ', no footage'}`}
      aria-describedby="timeline-keys"
      data-testid="timeline-bar"
      onPointerDown={onPointerDown}
      onPointerMove={onPointerMove}
      onPointerUp={onPointerUp}
      onPointerCancel={onPointerUp}
      onWheel={onWheel}
      onKeyDown={onKeyDown}
    >
      <div class="tl-ticks" aria-hidden="true">
        {ticks(view, width).map((t) => (
          <span key={t.tMs} class={t.day ? 'tl-tick tl-day' : 'tl-tick'} style={{ left: pct(t.tMs) }}>
            {tickText(t.tMs, t.day)}
          </span>
        ))}
      </div>
      <div class="tl-track" aria-hidden="true">
        {props.spans.filter(inView).map((s) => (
          <span
            key={s.startMs}
            class="tl-span"
            data-testid="timeline-span"
            style={{ left: pct(s.startMs), width: `${((s.endMs - s.startMs) / view.spanMs) * 100}%` }}
          />
        ))}
        {futureFrom < 1 ? <span class="tl-future" style={{ left: `${futureFrom * 100}%` }} /> : null}
        {props.events
          .filter((e) => inView(e))
          .map((e) => (
            <span key={e.id} class={`tl-event type-${e.type}`} style={{ left: pct(e.startMs) }} />
          ))}
      </div>
      <div class="tl-playhead" aria-hidden="true" />
    </div>
  );
}
