import { useEffect, useMemo, useState } from 'preact/hooks';
import { useApp } from '../app.js';
import { PtzHold, type Velocity } from '../ptz-hold.js';
import type { Device, DevicePtz } from '../types.js';

// Steering a pan-tilt-zoom camera from its live view: arrows and zoom held down move it (mouse,
// finger, or Enter / Space held on the focused button), presets are picked, saved and removed, and
// where the camera centres on a point, a tap on the picture brings that point to the middle (the
// live screen owns the picture; this only switches that mode on and off).

const SPEEDS = [
  { label: 'Slow', value: 0.2 },
  { label: 'Normal', value: 0.5 },
  { label: 'Fast', value: 1 },
] as const;

interface Direction {
  label: string;
  glyph: string;
  area: string;
  v: Velocity;
}

const DIRECTIONS: readonly Direction[] = [
  { label: 'Tilt up', glyph: '▲', area: 'up', v: { pan: 0, tilt: 1, zoom: 0 } },
  { label: 'Pan left', glyph: '◀', area: 'left', v: { pan: -1, tilt: 0, zoom: 0 } },
  { label: 'Pan right', glyph: '▶', area: 'right', v: { pan: 1, tilt: 0, zoom: 0 } },
  { label: 'Tilt down', glyph: '▼', area: 'down', v: { pan: 0, tilt: -1, zoom: 0 } },
  { label: 'Zoom out', glyph: '−', area: 'out', v: { pan: 0, tilt: 0, zoom: -1 } },
  { label: 'Zoom in', glyph: '+', area: 'in', v: { pan: 0, tilt: 0, zoom: 1 } },
];

export function PtzPad(props: {
  device: Device & { ptz: DevicePtz };
  online: boolean;
  centring: boolean;
  onCentring: (on: boolean) => void;
  /** What the last command came to, said in the live view's status line. */
  say: (text: string) => void;
}) {
  const { api } = useApp();
  const { device, say } = props;
  const [speed, setSpeed] = useState<number>(SPEEDS[1].value);
  const hold = useMemo(
    () =>
      new PtzHold(
        (request) => api.ptz(device.id, request),
        (err) => say(refusal(err)),
      ),
    [api, device.id, say],
  );
  // A screen left with a button held down still stops the camera.
  useEffect(() => () => hold.release(), [hold]);

  const scaled = (v: Velocity): Velocity => ({ pan: v.pan * speed, tilt: v.tilt * speed, zoom: v.zoom * speed });
  const disabled = !props.online;

  return (
    <section class="ptz" aria-labelledby="ptz-title" data-testid="ptz">
      <h2 id="ptz-title">Pan, tilt and zoom</h2>
      <p class="meta">Hold an arrow to move the camera; it stops when you let go.</p>
      <div class="ptz-pad" role="group" aria-label="Move the camera">
        {DIRECTIONS.map((d) => (
          <button
            key={d.area}
            type="button"
            class={`ptz-${d.area}`}
            aria-label={d.label}
            title={d.label}
            disabled={disabled}
            onPointerDown={(e) => {
              if (e.pointerType === 'mouse' && e.button !== 0) return;
              e.currentTarget.setPointerCapture(e.pointerId);
              hold.press(scaled(d.v));
            }}
            onPointerUp={() => hold.release()}
            onPointerCancel={() => hold.release()}
            onLostPointerCapture={() => hold.release()}
            onKeyDown={(e) => {
              if (e.key !== ' ' && e.key !== 'Enter') return;
              e.preventDefault();
              if (!e.repeat) hold.press(scaled(d.v));
            }}
            onKeyUp={(e) => {
              if (e.key === ' ' || e.key === 'Enter') hold.release();
            }}
            onBlur={() => hold.release()}
            onContextMenu={(e) => e.preventDefault()}
          >
            <span aria-hidden="true">{d.glyph}</span>
          </button>
        ))}
        <button
          type="button"
          class="ptz-home"
          disabled={disabled}
          onClick={() => void command(() => api.ptz(device.id, { action: 'ptz_home' }), 'Gone to the home position.')}
        >
          Home
        </button>
        <span class="ptz-zoom-label" aria-hidden="true">
          Zoom
        </span>
      </div>
      <div class="segmented" role="group" aria-label="Speed">
        {SPEEDS.map((s) => (
          <button key={s.label} type="button" aria-pressed={speed === s.value} onClick={() => setSpeed(s.value)}>
            {s.label}
          </button>
        ))}
      </div>
      {device.ptz.can_center ? (
        <button
          type="button"
          aria-pressed={props.centring}
          disabled={disabled}
          onClick={() => props.onCentring(!props.centring)}
          data-testid="ptz-centre"
        >
          {props.centring ? 'Tap the picture: on' : 'Tap the picture to centre'}
        </button>
      ) : null}
      <Presets device={device} disabled={disabled} command={command} />
    </section>
  );

  async function command(run: () => Promise<unknown>, done: string): Promise<boolean> {
    try {
      await run();
      say(done);
      return true;
    } catch (err) {
      say(refusal(err));
      return false;
    }
  }
}

function Presets(props: {
  device: Device & { ptz: DevicePtz };
  disabled: boolean;
  command: (run: () => Promise<unknown>, done: string) => Promise<boolean>;
}) {
  const { api, deviceChanged } = useApp();
  const { device, command } = props;
  const presets = device.ptz.presets;
  const [chosen, setChosen] = useState(presets[0]?.token ?? '');
  const [name, setName] = useState('');
  const chosenPreset = presets.find((p) => p.token === chosen) ?? presets[0] ?? null;

  // The Device's presets after a change: the gateway has read them again from the camera.
  const reload = () =>
    api
      .device(device.id)
      .then((d) => deviceChanged(d.id, d))
      .catch(() => undefined);

  return (
    <div class="ptz-presets">
      <h3>Presets</h3>
      {presets.length === 0 ? (
        <p class="placeholder-text">No presets saved on this camera.</p>
      ) : (
        <div class="ptz-preset-row">
          <label>
            <span class="visually-hidden">Preset</span>
            <select value={chosenPreset?.token ?? ''} onChange={(e) => setChosen(e.currentTarget.value)}>
              {presets.map((p) => (
                <option key={p.token} value={p.token}>
                  {p.name || p.token}
                </option>
              ))}
            </select>
          </label>
          <button
            type="button"
            disabled={props.disabled || !chosenPreset}
            onClick={() =>
              chosenPreset &&
              void command(
                () => api.ptz(device.id, { action: 'ptz_goto_preset', preset: chosenPreset.token }),
                `Gone to ${chosenPreset.name || chosenPreset.token}.`,
              )
            }
          >
            Go
          </button>
          <button
            type="button"
            class="quiet"
            disabled={props.disabled || !chosenPreset}
            onClick={() =>
              chosenPreset &&
              void command(
                () => api.ptz(device.id, { action: 'ptz_remove_preset', preset: chosenPreset.token }),
                `Removed ${chosenPreset.name || chosenPreset.token}.`,
              ).then(reload)
            }
          >
            Remove<span class="visually-hidden"> preset {chosenPreset?.name}</span>
          </button>
        </div>
      )}
      <form
        class="ptz-preset-row"
        onSubmit={(e) => {
          e.preventDefault();
          const text = name.trim();
          if (!text) return;
          void command(
            () => api.ptz(device.id, { action: 'ptz_set_preset', name: text }),
            `Saved this position as ${text}.`,
          ).then((ok) => {
            if (ok) setName('');
            return reload();
          });
        }}
      >
        <label>
          New preset
          <input
            value={name}
            maxLength={64}
            placeholder="e.g. Front gate"
            autocomplete="off"
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={props.disabled || name.trim() === ''}>
          Save position
        </button>
      </form>
    </div>
  );
}

function refusal(err: unknown): string {
  return `The camera did not move: ${err instanceof Error ? err.message : 'the gateway did not answer.'}`;
}
