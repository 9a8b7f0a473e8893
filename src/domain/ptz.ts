// Pan, tilt and zoom: what a camera can do (a Device's `ptz`) and what the API asks of it. Shared
// by the API (which reads the request), onvif (which carries it out) and the store (which keeps
// what each camera can do); the JSON shape is record-schemas.ts's.

/** The PTZ actions of POST /v1/devices/{id}/control, beside CONTROL_ACTIONS (types.ts). */
export const PTZ_ACTIONS = [
  'ptz_move',
  'ptz_stop',
  'ptz_goto_preset',
  'ptz_set_preset',
  'ptz_remove_preset',
  'ptz_home',
  'ptz_center',
] as const;
export type PtzAction = (typeof PTZ_ACTIONS)[number];

export const PTZ_LIMITS = {
  /** How long a move lasts without a new one or a stop: the gateway stops the camera then. */
  defaultMoveMs: 1000,
  /** A held button resends its move well within a second; ten is a lost connection, not a long press. */
  maxMoveMs: 10_000,
  /** Shorter than this, a camera barely starts before it is stopped. */
  minMoveMs: 100,
  /** ONVIF's ReferenceToken and Name are at most 64 characters. */
  tokenLength: 64,
  nameLength: 64,
  /** Presets listed on a Device: cameras keep 255 at most, 300 would be a broken answer. */
  presets: 256,
} as const;

export interface PtzPreset {
  token: string;
  name: string;
}

/** What a PTZ camera offers through the API; a Device's `ptz` is null for a fixed camera. */
export interface DevicePtz {
  presets: PtzPreset[];
  /** Centring on a point of the picture (RelativeMove in the field-of-view translation space). */
  canCenter: boolean;
}

/** One PTZ request, its values checked (the API's schema and ptzCommandOf). */
export type PtzCommand =
  /** Velocities in the camera's generic space, -1…1; stopped by the gateway after timeoutMs. */
  | { action: 'ptz_move'; pan: number; tilt: number; zoom: number; timeoutMs: number }
  | { action: 'ptz_stop' }
  | { action: 'ptz_goto_preset'; preset: string }
  | { action: 'ptz_set_preset'; name: string }
  | { action: 'ptz_remove_preset'; preset: string }
  | { action: 'ptz_home' }
  /** A point of the picture, 0–1 from its top-left corner, brought to the centre. */
  | { action: 'ptz_center'; x: number; y: number };

/** The request's fields each action takes, and which of them it needs. */
const FIELDS: Record<PtzAction, { takes: readonly string[]; needs: readonly string[] }> = {
  ptz_move: { takes: ['pan', 'tilt', 'zoom', 'timeout_ms'], needs: [] },
  ptz_stop: { takes: [], needs: [] },
  ptz_goto_preset: { takes: ['preset'], needs: ['preset'] },
  ptz_set_preset: { takes: ['name'], needs: ['name'] },
  ptz_remove_preset: { takes: ['preset'], needs: ['preset'] },
  ptz_home: { takes: [], needs: [] },
  ptz_center: { takes: ['x', 'y'], needs: ['x', 'y'] },
};

/** The fields of a control request besides its action, as the API's schema has checked them one by one. */
export interface PtzFields {
  pan?: number;
  tilt?: number;
  zoom?: number;
  timeout_ms?: number;
  preset?: string;
  name?: string;
  x?: number;
  y?: number;
}

export const isPtzAction = (action: string): action is PtzAction => (PTZ_ACTIONS as readonly string[]).includes(action);

/**
 * The command of a request whose fields are each valid on their own: a field the action does not
 * take, or one it needs that is missing, is a problem naming it (the API answers 400 with it).
 */
export function ptzCommandOf(
  action: PtzAction,
  fields: PtzFields,
): { command: PtzCommand; problem?: undefined } | { problem: string } {
  const given = Object.keys(fields).filter((k) => fields[k as keyof PtzFields] !== undefined);
  const { takes, needs } = FIELDS[action];
  const extra = given.find((k) => !takes.includes(k));
  if (extra !== undefined)
    return {
      problem: `body field ${extra} is not taken by ${action}${takes.length ? ` (it takes ${takes.join(', ')})` : ''}`,
    };
  const missing = needs.find((k) => !given.includes(k));
  if (missing !== undefined) return { problem: `body field ${missing} is required with ${action}` };
  switch (action) {
    case 'ptz_move': {
      const { pan, tilt, zoom } = fields;
      if (pan === undefined && tilt === undefined && zoom === undefined)
        return { problem: 'body fields pan, tilt, zoom: ptz_move needs at least one of them' };
      const timeoutMs = fields.timeout_ms ?? PTZ_LIMITS.defaultMoveMs;
      return { command: { action, pan: pan ?? 0, tilt: tilt ?? 0, zoom: zoom ?? 0, timeoutMs } };
    }
    case 'ptz_goto_preset':
    case 'ptz_remove_preset':
      return { command: { action, preset: fields.preset! } };
    case 'ptz_set_preset':
      return { command: { action, name: fields.name! } };
    case 'ptz_center':
      return { command: { action, x: fields.x!, y: fields.y! } };
    case 'ptz_stop':
    case 'ptz_home':
      return { command: { action } };
  }
}
