import { useMemo, useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { useApp } from '../app.js';
import {
  areaLabel,
  areaOfApiError,
  areasOf,
  areasPatch,
  areasProblems,
  canAdd,
  polygonAt,
  rebaseAreas,
  sameRef,
  withNewArea,
  withoutArea,
  withPolygon,
  type AreaProblem,
  type AreaRef,
  type Areas,
} from '../areas.js';
import { useFocusLater } from '../focus.js';
import {
  LIMITS,
  maskedShares,
  movedCorner,
  pointInPolygon,
  startSquare,
  withMidpoint,
  withoutCorner,
  type Point,
} from '../polygon.js';
import type { Device } from '../types.js';
import { useChanged } from '../use-changed.js';
import { AreaList } from './area-list.js';
import { AreaPicture, type Editing, type Shape } from './area-picture.js';

// A camera's motion mask and zones, drawn on its current picture and saved with one PATCH of the
// lists that changed. What the API would refuse (crossing edges, too few or too many corners, a
// zone name twice) is said next to the shape and refused here, before anything is sent; what the
// config file sets is shown and not editable.

interface Drawing {
  kind: AreaRef['kind'];
  corners: Point[];
}

type Outcome = { text: string; error: boolean } | null;

/** The lists being edited, the shape chosen or being drawn, and what is done to them. */
function useAreaDraft(device: Device) {
  const locked = { mask: device.settings.source.motion_mask === 'file', zone: device.settings.source.zones === 'file' };
  const [areas, setAreas] = useState<Areas>(() => areasOf(device.settings));
  const [selected, setSelected] = useState<AreaRef | null>(null);
  const [drawing, setDrawing] = useState<Drawing | null>(null);
  const [outcome, setOutcome] = useState<Outcome>(null);
  const [refused, setRefused] = useState<AreaProblem | null>(null);
  // Changed in another browser meanwhile: shown, unless something is being drawn here.
  useChanged(device.settings, (before, now) => setAreas((a) => rebaseAreas(a, before, now)));
  const focusLater = useFocusLater();
  const say = (text: string, error = false) => setOutcome({ text, error });

  const change = (next: Areas) => {
    setAreas(next);
    setRefused(null);
    setOutcome(null);
  };
  const editingRef = drawing === null && selected !== null && !locked[selected.kind] ? selected : null;
  const editing: Editing | null = drawing
    ? { label: `the new ${drawing.kind === 'mask' ? 'mask area' : 'zone'}`, polygon: drawing.corners, closed: false }
    : editingRef
      ? { label: areaLabel(areas, editingRef), polygon: polygonAt(areas, editingRef) ?? [], closed: true }
      : null;
  const editCorners = (update: (corners: readonly Point[]) => Point[]) => {
    if (drawing) setDrawing({ ...drawing, corners: update(drawing.corners) });
    else if (editingRef) change(withPolygon(areas, editingRef, update(polygonAt(areas, editingRef) ?? [])));
  };

  return {
    locked,
    areas,
    setAreas,
    selected,
    drawing,
    outcome,
    say,
    refused,
    setRefused,
    editing,
    editingRef,
    change,
    select: (ref: AreaRef | null) => {
      setDrawing(null);
      setSelected(ref);
      if (ref && !locked[ref.kind]) focusLater('[data-corner="0"]');
    },
    startDrawing: (kind: AreaRef['kind']) => {
      setSelected(null);
      setOutcome(null);
      setDrawing({ kind, corners: [] });
      focusLater('[data-draw]');
    },
    cancelDrawing: () => {
      if (drawing) focusLater(`[data-add="${drawing.kind}"]`);
      setDrawing(null);
    },
    finish: (corners: readonly Point[]) => {
      if (!drawing) return;
      if (corners.length < 3) return say('A shape needs at least 3 corners.', true);
      const [next, ref] = withNewArea(areas, drawing.kind, [...corners]);
      change(next);
      setDrawing(null);
      setSelected(ref);
      say(`${areaLabel(next, ref)} added. Save to keep it.`);
      focusLater('[data-corner="0"]');
    },
    tap: (at: Point) => {
      if (drawing) {
        if (drawing.corners.length >= LIMITS.corners)
          return say(`A shape has at most ${LIMITS.corners} corners.`, true);
        return setDrawing({ ...drawing, corners: [...drawing.corners, at] });
      }
      // Zones are drawn over the mask: the topmost shape under the tap is chosen.
      const zone = areas.zones.findLastIndex((z) => pointInPolygon(at, z.polygon));
      const mask = areas.mask.findLastIndex((p) => pointInPolygon(at, p));
      setSelected(zone >= 0 ? { kind: 'zone', index: zone } : mask >= 0 ? { kind: 'mask', index: mask } : null);
    },
    moveCorner: (i: number, to: Point) => editCorners((c) => movedCorner(c, i, to)),
    addCorner: (i: number) => {
      if ((editing?.polygon.length ?? 0) >= LIMITS.corners)
        return say(`A shape has at most ${LIMITS.corners} corners.`, true);
      editCorners((c) => withMidpoint(c, i));
    },
    removeCorner: (i: number) => {
      if (!drawing && (editing?.polygon.length ?? 0) <= 3)
        return say('A shape keeps at least 3 corners: delete the shape instead.', true);
      editCorners((c) => withoutCorner(c, i));
    },
    remove: (ref: AreaRef) => {
      const label = areaLabel(areas, ref);
      change(withoutArea(areas, ref));
      setSelected(null);
      say(`${label} deleted. Save to keep the change.`);
      focusLater(`[data-add="${ref.kind}"]`);
    },
    undo: () => {
      change(areasOf(device.settings));
      setSelected(null);
      setDrawing(null);
      focusLater('[data-save-areas]');
    },
  };
}

export function AreaEditor(props: { device: Device }) {
  const { api, deviceChanged } = useApp();
  const { device } = props;
  const draft = useAreaDraft(device);
  const { areas, drawing, say } = draft;
  const [aspect, setAspect] = useState(16 / 9);
  const [busy, setBusy] = useState(false);
  const shares = useMemo(() => maskedShares(areas.mask), [areas.mask]);
  const problems = useMemo(() => areasProblems(areas), [areas]);
  const dirty = Object.keys(areasPatch(areas, device.settings)).length > 0;

  const save = async () => {
    if (drawing) return say('Finish or cancel the shape being drawn first.', true);
    const first = problems[0];
    if (first) return say(`Not saved. ${first.ref ? `${areaLabel(areas, first.ref)}: ` : ''}${first.message}`, true);
    const patch = areasPatch(areas, device.settings);
    if (Object.keys(patch).length === 0) return say('Nothing to save: no change.');
    setBusy(true);
    try {
      const saved = await api.updateDevice(device.id, patch);
      deviceChanged(saved.id, saved);
      draft.setAreas(areasOf(saved.settings));
      say('Saved: they apply from the next motion on.');
    } catch (err) {
      const text = err instanceof Error ? err.message : 'The gateway did not answer.';
      const at = err instanceof ApiError ? areaOfApiError(text) : null;
      draft.setRefused(at && { ref: at.ref, field: at.field, message: text });
      say(`Not saved: ${text}`, true);
    } finally {
      setBusy(false);
    }
  };

  const shapes: Shape[] = [
    ...areas.mask.map((polygon, index) => shapeOf(areas, { kind: 'mask', index }, polygon, false)),
    ...areas.zones.map((z, index) => shapeOf(areas, { kind: 'zone', index }, z.polygon, z.required)),
  ].map((s) => ({
    ...s,
    selected: sameRef(s.ref, draft.selected),
    bad: problems.some((p) => sameRef(p.ref, s.ref)),
  }));

  return (
    <section class="areas" aria-labelledby="areas-title">
      <h2 id="areas-title">Motion mask and zones</h2>
      <DrawTools
        drawing={drawing}
        locked={draft.locked}
        canAdd={(kind) => canAdd(areas, kind)}
        onStart={draft.startDrawing}
        onFinish={() => drawing && draft.finish(drawing.corners)}
        onSquare={() => draft.finish(startSquare(aspect))}
        onCancel={draft.cancelDrawing}
      />
      <AreaPicture
        api={api}
        deviceId={device.id}
        cameraName={device.name}
        shapes={shapes}
        editing={draft.editing}
        shares={shares}
        hintId="area-keys"
        onAspect={setAspect}
        onTap={draft.tap}
        onCorner={draft.moveCorner}
        onRemoveCorner={draft.removeCorner}
        onAddCorner={draft.addCorner}
        onClose={() => drawing && draft.finish(drawing.corners)}
      />
      <p id="area-keys" class="meta">
        To change a shape, tap inside it or use Edit corners below. Drag a corner to move it; focused, the arrow keys
        move it (Shift: further) and Delete removes it. A + between two corners adds one there.
      </p>
      <AreaList
        areas={areas}
        locked={draft.locked}
        selected={draft.editingRef ?? draft.selected}
        shares={shares}
        problems={draft.refused ? [draft.refused, ...problems] : problems}
        onChange={draft.change}
        onSelect={draft.select}
        onRemove={draft.remove}
      />
      <div class="save-row">
        <button type="button" class="primary" data-save-areas aria-disabled={busy} onClick={() => busy || void save()}>
          Save mask and zones
        </button>
        {dirty ? (
          <button type="button" class="quiet" onClick={draft.undo}>
            Undo changes
          </button>
        ) : null}
        <p role="status" class={draft.outcome?.error ? 'outcome field-error' : 'outcome'} data-testid="areas-outcome">
          {draft.outcome?.text}
        </p>
      </div>
    </section>
  );
}

function shapeOf(areas: Areas, ref: AreaRef, polygon: readonly Point[], required: boolean) {
  const label = ref.kind === 'mask' ? `Mask ${ref.index + 1}` : (areas.zones[ref.index]?.name ?? '');
  return {
    key: `${ref.kind}-${ref.index}`,
    kind: ref.kind,
    ref,
    label,
    polygon,
    required,
    bad: false,
    selected: false,
  };
}

function DrawTools(props: {
  drawing: Drawing | null;
  locked: Record<AreaRef['kind'], boolean>;
  canAdd: (kind: AreaRef['kind']) => boolean;
  onStart: (kind: AreaRef['kind']) => void;
  onFinish: () => void;
  onSquare: () => void;
  onCancel: () => void;
}) {
  const { drawing } = props;
  if (drawing) {
    const what = drawing.kind === 'mask' ? 'a mask area' : 'a zone';
    return (
      <div class="toolbar draw-tools">
        <p class="draw-hint" role="status">
          Drawing {what}: tap or click the picture at each corner ({drawing.corners.length} so far), then Finish or tap
          the first corner.
        </p>
        {drawing.corners.length === 0 ? (
          <button type="button" data-draw onClick={props.onSquare}>
            Start from a square
          </button>
        ) : (
          <button
            type="button"
            class="primary"
            data-draw
            aria-disabled={drawing.corners.length < 3}
            onClick={props.onFinish}
          >
            Finish
          </button>
        )}
        <button type="button" class="quiet" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    );
  }
  const add = (kind: AreaRef['kind'], text: string) =>
    props.locked[kind] ? null : (
      <button type="button" data-add={kind} disabled={!props.canAdd(kind)} onClick={() => props.onStart(kind)}>
        {text}
      </button>
    );
  return (
    <div class="toolbar draw-tools">
      {add('mask', 'Draw a mask area')}
      {add('zone', 'Draw a zone')}
    </div>
  );
}
