import { useRef, useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { useFocusLater } from '../focus.js';
import { clampPoint, MOTION_GRID, type Point, type Polygon } from '../polygon.js';
import { AuthImage } from './auth-image.js';

// The camera's current picture with its mask and zones drawn over it in 0–1 coordinates (an SVG
// stretched over the picture, which is shown whole at its own aspect ratio), and the corners of
// the shape being edited as buttons on it: a tap or click on the picture is handed up (a corner
// for the shape being drawn, or the shape under it chosen), a corner is dragged with a mouse or a
// finger, and by keys when focused: arrows move it (Shift: ten times as far), Delete removes it,
// Enter on the first corner of a shape being drawn closes it. A "+" halfway along each edge adds
// a corner there. The grid's cells the mask covers are shaded, darker the more of a cell it covers.

export interface Shape {
  key: string;
  kind: 'mask' | 'zone';
  label: string;
  polygon: Polygon;
  required: boolean;
  /** Not a usable polygon: drawn in the error colour. */
  bad: boolean;
  selected: boolean;
}

/** The shape whose corners have handles: the one chosen, or the one being drawn (not closed yet). */
export interface Editing {
  label: string;
  polygon: Polygon;
  closed: boolean;
}

/** A pointer that moved less than this (px) is a tap. */
const TAP_PX = 6;
const KEY_STEP = 0.01;

interface CornerActions {
  onCorner: (index: number, to: Point) => void;
  onRemoveCorner: (index: number) => void;
  onAddCorner: (afterIndex: number) => void;
  onClose: () => void;
}

export function AreaPicture(
  props: CornerActions & {
    api: Api;
    deviceId: string;
    cameraName: string;
    shapes: readonly Shape[];
    editing: Editing | null;
    /** The motion grid's cells, row by row: how much of each the mask covers (0–1). */
    shares: readonly number[];
    /** Its id: the keys the corners take. */
    hintId: string;
    onAspect: (aspect: number) => void;
    onTap: (at: Point) => void;
  },
) {
  const stage = useRef<HTMLDivElement>(null);
  const tap = useRef<{ id: number; x: number; y: number } | null>(null);
  const [aspect, setAspect] = useState(16 / 9);

  const pointAt = (e: PointerEvent): Point => {
    const box = stage.current?.getBoundingClientRect();
    if (!box || box.width === 0 || box.height === 0) return [0.5, 0.5];
    return clampPoint((e.clientX - box.left) / box.width, (e.clientY - box.top) / box.height);
  };
  const onPointerUp = (e: PointerEvent) => {
    const t = tap.current;
    tap.current = null;
    if (t && t.id === e.pointerId && Math.hypot(e.clientX - t.x, e.clientY - t.y) < TAP_PX) props.onTap(pointAt(e));
  };

  return (
    <div
      class="area-stage"
      ref={stage}
      style={{ aspectRatio: String(aspect) }}
      onPointerDown={(e) => (tap.current = { id: e.pointerId, x: e.clientX, y: e.clientY })}
      onPointerUp={onPointerUp}
      onPointerCancel={() => (tap.current = null)}
      data-testid="area-picture"
    >
      <AuthImage
        api={props.api}
        path={props.api.snapshotPath(props.deviceId, 1280)}
        alt={`Current picture of ${props.cameraName}, with its motion mask and zones drawn over it`}
        placeholder="No picture of the camera now: the areas are drawn on an empty frame."
        class="area-image"
        onSize={(w, h) => {
          if (w > 0 && h > 0) {
            setAspect(w / h);
            props.onAspect(w / h);
          }
        }}
      />
      <Overlay shapes={props.shapes} editing={props.editing} shares={props.shares} />
      {props.shapes.map((s) => (
        <span
          key={s.key}
          class={`area-tag area-tag-${s.kind}${tagBelow(s.polygon) ? ' area-tag-below' : ''}`}
          style={tagPlace(s.polygon)}
          aria-hidden="true"
        >
          {s.label}
          {s.required ? ' (required)' : ''}
        </span>
      ))}
      {props.editing ? <Handles {...props} editing={props.editing} pointAt={pointAt} /> : null}
    </div>
  );
}

/** The corners of the shape being edited, and a "+" halfway along each of its edges once it is closed. */
function Handles(props: CornerActions & { editing: Editing; hintId: string; pointAt: (e: PointerEvent) => Point }) {
  const { editing } = props;
  const drag = useRef<{ id: number; index: number; x: number; y: number; moved: boolean } | null>(null);
  const focusLater = useFocusLater();
  const n = editing.polygon.length;
  const drawing = !editing.closed;

  const onDown = (e: PointerEvent, index: number) => {
    // Not the picture's tap; and the corner keeps the focus for the keys.
    e.stopPropagation();
    e.preventDefault();
    const el = e.currentTarget as HTMLElement;
    el.focus();
    el.setPointerCapture(e.pointerId);
    drag.current = { id: e.pointerId, index, x: e.clientX, y: e.clientY, moved: false };
  };
  const onMove = (e: PointerEvent) => {
    const d = drag.current;
    if (!d || d.id !== e.pointerId) return;
    if (Math.hypot(e.clientX - d.x, e.clientY - d.y) >= TAP_PX) d.moved = true;
    if (d.moved) props.onCorner(d.index, props.pointAt(e));
  };
  const onUp = (e: PointerEvent) => {
    const d = drag.current;
    if (!d || d.id !== e.pointerId) return;
    drag.current = null;
    // The first corner of a shape being drawn, tapped: the shape is closed there.
    if (!d.moved && d.index === 0 && drawing) props.onClose();
  };
  const onKey = (e: KeyboardEvent, index: number) => {
    const p = editing.polygon[index];
    if (!p) return;
    const step = KEY_STEP * (e.shiftKey ? 10 : 1);
    const moves: Record<string, Point> = {
      ArrowLeft: [p[0] - step, p[1]],
      ArrowRight: [p[0] + step, p[1]],
      ArrowUp: [p[0], p[1] - step],
      ArrowDown: [p[0], p[1] + step],
    };
    const to = moves[e.key];
    if (to) {
      e.preventDefault();
      props.onCorner(index, to);
    } else if (e.key === 'Delete' || e.key === 'Backspace') {
      e.preventDefault();
      props.onRemoveCorner(index);
      focusLater(`[data-corner="${Math.max(0, index - 1)}"]`);
    } else if (e.key === 'Enter' && index === 0 && drawing) {
      e.preventDefault();
      props.onClose();
    }
  };

  return (
    <>
      {drawing
        ? null
        : editing.polygon.map((p, i) => {
            const q = editing.polygon[(i + 1) % n]!;
            return (
              <button
                key={`mid-${i}`}
                type="button"
                class="area-midpoint"
                style={place([(p[0] + q[0]) / 2, (p[1] + q[1]) / 2])}
                aria-label={`Add a corner to ${editing.label} between corners ${i + 1} and ${((i + 1) % n) + 1}`}
                onPointerDown={(e) => e.stopPropagation()}
                onClick={() => {
                  props.onAddCorner(i);
                  focusLater(`[data-corner="${i + 1}"]`);
                }}
              >
                <span aria-hidden="true">+</span>
              </button>
            );
          })}
      {editing.polygon.map((p, i) => (
        <button
          key={`corner-${i}`}
          type="button"
          class={`area-corner${i === 0 && drawing ? ' area-corner-first' : ''}`}
          style={place(p)}
          data-corner={i}
          aria-label={`Corner ${i + 1} of ${editing.label}: ${pct(p[0])} across, ${pct(p[1])} down${i === 0 && drawing && n >= 3 ? '; Enter closes the shape here' : ''}`}
          aria-describedby={props.hintId}
          onPointerDown={(e) => onDown(e, i)}
          onPointerMove={onMove}
          onPointerUp={onUp}
          onPointerCancel={onUp}
          onKeyDown={(e) => onKey(e, i)}
        />
      ))}
    </>
  );
}

function Overlay(props: { shapes: readonly Shape[]; editing: Editing | null; shares: readonly number[] }) {
  const { cols, rows } = MOTION_GRID;
  const points = (polygon: Polygon) => polygon.map((p) => `${p[0]},${p[1]}`).join(' ');
  return (
    <svg class="area-svg" viewBox="0 0 1 1" preserveAspectRatio="none" aria-hidden="true">
      {props.shares.map((share, i) =>
        share > 0 ? (
          <rect
            key={i}
            class="area-cell"
            x={(i % cols) / cols}
            y={Math.floor(i / cols) / rows}
            width={1 / cols}
            height={1 / rows}
            fill-opacity={0.15 + 0.45 * share}
          />
        ) : null,
      )}
      {Array.from({ length: cols - 1 }, (_, c) => (
        <line key={`c${c}`} class="area-grid" x1={(c + 1) / cols} x2={(c + 1) / cols} y1={0} y2={1} />
      ))}
      {Array.from({ length: rows - 1 }, (_, r) => (
        <line key={`r${r}`} class="area-grid" y1={(r + 1) / rows} y2={(r + 1) / rows} x1={0} x2={1} />
      ))}
      {props.shapes.map((s) => (
        <polygon
          key={s.key}
          points={points(s.polygon)}
          class={[
            'area-shape',
            `area-${s.kind}`,
            s.required ? 'area-required' : '',
            s.bad ? 'area-bad' : '',
            s.selected ? 'area-selected' : '',
          ].join(' ')}
        />
      ))}
      {props.editing && !props.editing.closed ? (
        <polyline points={points(props.editing.polygon)} class="area-drawing" />
      ) : null}
    </svg>
  );
}

const pct = (v: number) => `${Math.round(v * 100)} %`;

function place(p: Point) {
  return { left: `${p[0] * 100}%`, top: `${p[1] * 100}%` };
}

/** A shape's name tag: at its topmost corner, inside the picture. */
function tagPlace(polygon: Polygon) {
  const top = topCorner(polygon);
  return { left: `${Math.min(top[0], 0.85) * 100}%`, top: `${top[1] * 100}%` };
}

/** Near the top of the picture the tag goes under the corner, not above the picture. */
const tagBelow = (polygon: Polygon) => topCorner(polygon)[1] < 0.08;

function topCorner(polygon: Polygon): Point {
  return polygon.reduce((a, b) => (b[1] < a[1] ? b : a), polygon[0] ?? ([0, 0] as Point));
}
