import { field } from './request.js';
import * as R from './responses.js';

// The simulated camera's pan, tilt and zoom: a position in the generic spaces (pan and tilt -1…1,
// zoom 0…1) that moves with time while a ContinuousMove runs (until Stop, another command, or the
// move's Timeout), presets, a home position, and relative moves in the generic and field-of-view
// spaces. The readers of the gateway's requests are exported for the round-trip tests.

/** Generic units a second at velocity 1: the whole pan range in four seconds. */
export const SIM_PTZ_SPEED = 0.5;
/** Half the field of view, in generic pan units, at the widest zoom; narrower as it zooms in. */
const HALF_FOV = 0.3;
/** A ContinuousMove without Timeout stops after the configuration's DefaultPTZTimeout (PT10S). */
const DEFAULT_TIMEOUT_MS = 10_000;

export interface SimMotion {
  /** Wall clock (ms) of the change. */
  at: number;
  position: R.SimPosition;
  /** Generic units a second from `at` until `until`. */
  rate: R.SimPosition;
  until: number;
}

type Body = Record<string, unknown>;

const first = (v: unknown): unknown => (Array.isArray(v) ? (v[0] as unknown) : v);
const attr = (node: unknown, name: string): string | null => {
  const attrs = (first(node) as { $?: Record<string, unknown> } | undefined)?.$;
  const v = attrs?.[name];
  return typeof v === 'string' ? v : null;
};
const child = (node: unknown, name: string): unknown => {
  const obj = first(node);
  return obj && typeof obj === 'object' ? (obj as Body)[name] : undefined;
};
const num = (s: string | null): number | null => {
  if (s === null || s.trim() === '') return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
};

/** ContinuousMove's Velocity; an axis left out is still, a value that is no number is NaN (refused). */
export function readVelocity(body: Body): R.SimPosition {
  const v = child(body, 'Velocity');
  const axis = (el: string, a: string) => {
    const node = child(v, el);
    if (node === undefined) return 0;
    return num(attr(node, a)) ?? NaN;
  };
  return { pan: axis('PanTilt', 'x'), tilt: axis('PanTilt', 'y'), zoom: axis('Zoom', 'x') };
}

/** A Timeout of seconds ("PT1.5S", "PT2M"), ms; null when absent or unreadable. */
export function readTimeout(body: Body): number | null {
  const m = /^PT(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?$/.exec(field(body, 'Timeout') ?? '');
  return m && (m[1] || m[2]) ? Math.round((Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0)) * 1000) : null;
}

/** RelativeMove's pan/tilt translation and its space (null: the configuration's default). */
export function readTranslation(body: Body): { x: number; y: number; space: string | null } | null {
  const pt = child(child(body, 'Translation'), 'PanTilt');
  if (pt === undefined) return null;
  const x = num(attr(pt, 'x'));
  const y = num(attr(pt, 'y'));
  return x === null || y === null ? null : { x, y, space: attr(pt, 'space') };
}

/** Which axes a Stop stops (both when it does not say). */
export function readStop(body: Body): { panTilt: boolean; zoom: boolean } {
  return { panTilt: field(body, 'PanTilt') !== 'false', zoom: field(body, 'Zoom') !== 'false' };
}

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));
const ZERO: R.SimPosition = { pan: 0, tilt: 0, zoom: 0 };

export interface SimulatedPtzOptions {
  /** Offers the field-of-view translation space (centring on a point). */
  fov?: boolean;
  homeSupported?: boolean;
  /** Told of every change of motion (the picture follows it). */
  onMotion?: (m: SimMotion) => void;
}

export class SimulatedPtz {
  private base: R.SimPosition = { ...ZERO };
  private since = Date.now();
  private velocity: R.SimPosition = { ...ZERO };
  private until = 0;
  private readonly presets = new Map<string, { name: string; position: R.SimPosition }>();
  private nextToken = 1;
  private readonly listeners = new Set<(operation: string, atMs: number) => void>();

  constructor(private readonly opts: SimulatedPtzOptions = {}) {}

  /** Where the camera points now (or at `now`, ms). */
  position(now = Date.now()): R.SimPosition {
    const t = (Math.min(now, this.until) - this.since) / 1000;
    if (t <= 0) return { ...this.base };
    const rate = this.rate();
    return {
      pan: clamp(this.base.pan + rate.pan * t, -1, 1),
      tilt: clamp(this.base.tilt + rate.tilt * t, -1, 1),
      zoom: clamp(this.base.zoom + rate.zoom * t, 0, 1),
    };
  }

  /** A ContinuousMove is running (the camera may already sit at the end of its range). */
  moving(now = Date.now()): boolean {
    return now < this.until && (this.velocity.pan !== 0 || this.velocity.tilt !== 0 || this.velocity.zoom !== 0);
  }

  /** Every PTZ request as it arrives, with performance.now() then: what a benchmark times. */
  onRequest(listener: (operation: string, atMs: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private rate(): R.SimPosition {
    return {
      pan: this.velocity.pan * SIM_PTZ_SPEED,
      tilt: this.velocity.tilt * SIM_PTZ_SPEED,
      zoom: this.velocity.zoom * SIM_PTZ_SPEED,
    };
  }

  /** The position becomes the base of what comes next; `velocity` from `now` until `until`. */
  private set(now: number, base: R.SimPosition, velocity: R.SimPosition = ZERO, until = now): void {
    this.base = base;
    this.since = now;
    this.velocity = { ...velocity };
    this.until = until;
    this.opts.onMotion?.({ at: now, position: { ...base }, rate: this.rate(), until });
  }

  /** The answer to a PTZ operation, or null for an operation of another service. */
  answer(operation: string, body: Body, now: number): string | null {
    const fov = this.opts.fov ?? true;
    switch (operation) {
      case 'GetNodes':
        return R.ptzNodes({ fov, homeSupported: this.opts.homeSupported ?? true });
      case 'GetConfigurations':
        return R.ptzConfigurations();
      case 'GetConfigurationOptions':
        return field(body, 'ConfigurationToken') === R.SIM_PTZ.configuration
          ? R.ptzConfigurationOptions({ fov })
          : R.fault('env:Sender', 'ter:NoConfig', 'No such PTZ configuration');
      case 'GetStatus':
        return this.profile(body) ?? R.ptzStatus(this.position(now), this.moving(now), now);
      case 'GetPresets':
        return (
          this.profile(body) ??
          R.ptzPresets([...this.presets].map(([token, p]) => ({ token, name: p.name, position: p.position })))
        );
      case 'SetPreset':
      case 'RemovePreset':
      case 'GotoPreset':
        return this.profile(body) ?? this.preset(operation, body, now);
      case 'ContinuousMove':
      case 'Stop':
      case 'GotoHomePosition':
      case 'RelativeMove':
        return this.profile(body) ?? this.move(operation, body, now);
      default:
        return null;
    }
  }

  /** Every request naming a profile must name one of the camera's; null when it does. */
  private profile(body: Body): string | null {
    const token = field(body, 'ProfileToken');
    return token === 'Profile_1' || token === 'Profile_2'
      ? null
      : R.fault('env:Sender', 'ter:NoProfile', 'No such media profile');
  }

  private move(operation: string, body: Body, now: number): string {
    for (const listener of this.listeners) listener(operation, performance.now());
    const here = this.position(now);
    switch (operation) {
      case 'ContinuousMove': {
        const v = readVelocity(body);
        if (![v.pan, v.tilt, v.zoom].every((x) => Math.abs(x) <= 1))
          return R.fault('env:Sender', 'ter:InvalidArgVal', 'Velocity outside the generic velocity space');
        this.set(now, here, v, now + (readTimeout(body) ?? DEFAULT_TIMEOUT_MS));
        break;
      }
      case 'Stop': {
        const { panTilt, zoom } = readStop(body);
        const v = this.moving(now) ? this.velocity : ZERO;
        const keep = { pan: panTilt ? 0 : v.pan, tilt: panTilt ? 0 : v.tilt, zoom: zoom ? 0 : v.zoom };
        const still = keep.pan === 0 && keep.tilt === 0 && keep.zoom === 0;
        this.set(now, here, keep, still ? now : this.until);
        break;
      }
      case 'GotoHomePosition':
        if (this.opts.homeSupported === false)
          return R.fault('env:Receiver', 'ter:ActionNotSupported', 'No home position');
        this.set(now, { ...ZERO });
        break;
      case 'RelativeMove': {
        const t = readTranslation(body);
        if (!t) return R.fault('env:Sender', 'ter:InvalidArgVal', 'No pan/tilt translation');
        const inFov = t.space === `http://www.onvif.org/ver10/tptz/PanTiltSpaces/TranslationSpaceFov`;
        if (inFov && this.opts.fov === false)
          return R.fault('env:Sender', 'ter:InvalidArgVal', 'Field-of-view translation not supported');
        const scale = inFov ? (HALF_FOV * (1 - 0.75 * here.zoom)) / R.SIM_PTZ.fovRange : 1;
        this.set(now, {
          pan: clamp(here.pan + t.x * scale, -1, 1),
          tilt: clamp(here.tilt + t.y * scale, -1, 1),
          zoom: here.zoom,
        });
        break;
      }
    }
    return R.ptzDone(operation);
  }

  private preset(operation: string, body: Body, now: number): string {
    for (const listener of this.listeners) listener(operation, performance.now());
    const token = field(body, 'PresetToken');
    if (operation === 'SetPreset') {
      if (this.moving(now)) return R.fault('env:Receiver', 'ter:MovingPTZ', 'The camera is moving');
      if (token === null && this.presets.size >= R.SIM_PTZ.maxPresets)
        return R.fault('env:Receiver', 'ter:TooManyPresets', 'No room for another preset');
      if (token !== null && !this.presets.has(token)) return R.fault('env:Sender', 'ter:NoToken', 'No such preset');
      const made = token ?? String(this.nextToken++);
      const name = field(body, 'PresetName') ?? `Preset ${made}`;
      this.presets.set(made, { name, position: this.position(now) });
      return R.ptzSetPreset(made);
    }
    const preset = token === null ? undefined : this.presets.get(token);
    if (!preset || token === null) return R.fault('env:Sender', 'ter:NoToken', 'No such preset');
    if (operation === 'RemovePreset') this.presets.delete(token);
    else this.set(now, { ...preset.position });
    return R.ptzDone(operation);
  }
}
