import { areaLabel, sameRef, withZone, type AreaProblem, type AreaRef, type Areas } from '../areas.js';
import { LIMITS, MOTION_GRID } from '../polygon.js';

// The mask and the zones in words, beside the picture they are drawn on: what a screen reader reads
// instead of the drawing, and where a zone is named, made required, told to alert for what stays
// put or for a person who lingers, chosen for its corners to be edited, or deleted. A shape's problems (what the API would refuse) are said under it.

const FILE_NOTE = "Set in the gateway's configuration file.";

interface ListProps {
  areas: Areas;
  locked: Record<AreaRef['kind'], boolean>;
  selected: AreaRef | null;
  shares: readonly number[];
  problems: readonly AreaProblem[];
  onChange: (areas: Areas) => void;
  onSelect: (ref: AreaRef | null) => void;
  onRemove: (ref: AreaRef) => void;
}

export function AreaList(props: ListProps) {
  const { areas, locked } = props;
  const whole = props.shares.filter((s) => s >= 1).length;
  const part = props.shares.filter((s) => s > 0 && s < 1).length;
  const cells = MOTION_GRID.cols * MOTION_GRID.rows;
  const grid = `${MOTION_GRID.cols} × ${MOTION_GRID.rows}`;
  return (
    <div class="area-lists" data-testid="area-list">
      {props.problems
        .filter((p) => p.ref === null)
        .map((p) => (
          <p key={p.message} class="field-error">
            {p.message}
          </p>
        ))}
      <h3>Motion mask</h3>
      <p class="meta">
        Where the gateway&apos;s motion detection ignores changes: a road, a tree in the wind, a clock on the picture.
        {whole + part > 0
          ? ` It covers ${whole} of the ${cells} cells of the motion grid (${grid}, shaded) whole${part > 0 ? ` and ${part} in part` : ''}.`
          : ''}
      </p>
      {locked.mask ? <p class="file-note">{FILE_NOTE}</p> : null}
      {areas.mask.length === 0 ? <p class="placeholder-text">No mask: changes anywhere in the picture count.</p> : null}
      <ul class="area-list">
        {areas.mask.map((polygon, index) => {
          const ref: AreaRef = { kind: 'mask', index };
          return (
            <li key={index} class={sameRef(props.selected, ref) ? 'selected' : undefined} data-testid="mask-area">
              <span class="area-swatch area-swatch-mask" aria-hidden="true" />
              <span class="area-title">{areaLabel(areas, ref)}</span>
              <span class="meta">{corners(polygon.length)}</span>
              <ShapeActions list={props} shape={ref} />
              <Problems problems={props.problems} shape={ref} field="polygon" />
            </li>
          );
        })}
      </ul>
      <h3>Zones</h3>
      <p class="meta">
        Named areas. When a zone is required, a person or vehicle counts only when it stands inside a required zone.
        Something that has not moved (a parked car) makes no alert, unless its zone says to alert for it; a zone can
        also wait until a person has stayed a while.
      </p>
      {locked.zone ? <p class="file-note">{FILE_NOTE}</p> : null}
      {areas.zones.length === 0 ? <p class="placeholder-text">No zones: people and vehicles count anywhere.</p> : null}
      <ul class="area-list">
        {areas.zones.map((_, index) => (
          <ZoneItem key={index} list={props} index={index} />
        ))}
      </ul>
    </div>
  );
}

function ZoneItem(props: { list: ListProps; index: number }) {
  const { areas, locked, onChange } = props.list;
  const { index } = props;
  const zone = areas.zones[index]!;
  const ref: AreaRef = { kind: 'zone', index };
  const nameProblem = props.list.problems.some((p) => sameRef(p.ref, ref) && p.field === 'name');
  const stayProblem = props.list.problems.some((p) => sameRef(p.ref, ref) && p.field === 'loitering');
  return (
    <li class={sameRef(props.list.selected, ref) ? 'selected' : undefined} data-testid="zone">
      <span class="area-swatch area-swatch-zone" aria-hidden="true" />
      <label class="area-name">
        Zone name
        <input
          value={zone.name}
          readOnly={locked.zone}
          maxLength={64}
          spellcheck={false}
          autocomplete="off"
          aria-invalid={nameProblem}
          aria-describedby={nameProblem ? problemsId(ref, 'name') : undefined}
          onInput={(e) => onChange(withZone(areas, index, { name: e.currentTarget.value }))}
        />
      </label>
      <label class="check">
        <input
          type="checkbox"
          checked={zone.required}
          disabled={locked.zone}
          onChange={(e) => onChange(withZone(areas, index, { required: e.currentTarget.checked }))}
        />
        Required
      </label>
      <label class="check">
        <input
          type="checkbox"
          checked={zone.alert_on_stationary}
          disabled={locked.zone}
          onChange={(e) => onChange(withZone(areas, index, { alert_on_stationary: e.currentTarget.checked }))}
        />
        Alert for things that stay put
      </label>
      <label class="area-stay">
        Alert when a person stays
        <input
          type="number"
          inputMode="numeric"
          min={1}
          max={LIMITS.loiteringS}
          step={1}
          placeholder="any time"
          value={zone.loitering_s ?? ''}
          readOnly={locked.zone}
          aria-invalid={stayProblem}
          aria-describedby={stayProblem ? problemsId(ref, 'loitering') : undefined}
          onInput={(e) => {
            const text = e.currentTarget.value;
            onChange(withZone(areas, index, { loitering_s: text === '' ? null : Number(text) }));
          }}
        />
        s
      </label>
      <span class="meta">{corners(zone.polygon.length)}</span>
      <ShapeActions list={props.list} shape={ref} />
      <Problems problems={props.list.problems} shape={ref} field="name" />
      <Problems problems={props.list.problems} shape={ref} field="loitering" />
      <Problems problems={props.list.problems} shape={ref} field="polygon" />
    </li>
  );
}

/** "Edit corners" (its corners get handles on the picture) and "Delete", unless the config file sets it. */
function ShapeActions(props: { list: ListProps; shape: AreaRef }) {
  const { list, shape } = props;
  if (list.locked[shape.kind]) return null;
  const chosen = sameRef(list.selected, shape);
  const label = areaLabel(list.areas, shape);
  return (
    <span class="row-actions">
      <button type="button" class="small" aria-pressed={chosen} onClick={() => list.onSelect(chosen ? null : shape)}>
        Edit corners<span class="visually-hidden"> of {label}</span>
      </button>
      <button type="button" class="small quiet" onClick={() => list.onRemove(shape)}>
        Delete<span class="visually-hidden"> {label}</span>
      </button>
    </span>
  );
}

type ProblemPlace = 'name' | 'loitering' | 'polygon';
const problemsId = (ref: AreaRef, field: ProblemPlace) => `area-problem-${ref.kind}-${ref.index}-${field}`;

/** A shape's problems of one kind: a zone's name under its name, anything else under the shape. */
function Problems(props: { problems: readonly AreaProblem[]; shape: AreaRef; field: ProblemPlace }) {
  const found = props.problems.filter(
    (p) =>
      sameRef(p.ref, props.shape) &&
      (p.field === 'name' || p.field === 'loitering' ? p.field : 'polygon') === props.field,
  );
  if (found.length === 0) return null;
  return (
    <p class="field-error" id={problemsId(props.shape, props.field)}>
      {found.map((p) => p.message).join(' ')}
    </p>
  );
}

const corners = (n: number) => `${n} corner${n === 1 ? '' : 's'}`;
