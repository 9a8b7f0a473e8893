import { PTZ_LIMITS, type PtzPreset } from '../../domain/ptz.js';
import type { XmlObject } from '../soap-xml.js';
import { PTZ_NS } from './device-ops.js';
import { at, attrOf, booleanOf, durationMsOf, intOf, listOf, numberOf, responseOf, textOf } from './read.js';
import { escapeXmlText } from './security.js';

// PTZ service (ver20): request bodies and the readers of their answers. Velocities and positions
// are sent without a space attribute, so each is read in the configuration's default space: the
// generic spaces (-1…1) on every PTZ camera of the captures. Centring names its space (FOV_SPACE).

const TT = 'xmlns="http://www.onvif.org/ver10/schema"';
/** Relative pan/tilt as a part of the field of view (ONVIF PTZ "Pan/Tilt Translation Space in FOV"). */
export const FOV_SPACE = 'http://www.onvif.org/ver10/tptz/PanTiltSpaces/TranslationSpaceFov';

export interface Range {
  min: number;
  max: number;
}

/** The field-of-view translation space as the camera describes it: what its x and y run between. */
export interface FovSpace {
  x: Range;
  y: Range;
}

export interface PtzNode {
  token: string | null;
  homeSupported: boolean;
  maxPresets: number | null;
  fov: FovSpace | null;
}

export interface PtzOptions {
  fov: FovSpace | null;
  /** The Timeout a ContinuousMove may carry, ms; null when the camera does not say. */
  timeout: Range | null;
}

const token = (t: string) => escapeXmlText(t);
/** A number as xs:float text, rounded to what any camera resolves (1e-6) and never in exponent form. */
export const xmlNumber = (n: number): string => {
  const fixed = (Math.round(n * 1e6) / 1e6).toFixed(6).replace(/\.?0+$/, '');
  return fixed === '-0' ? '0' : fixed;
};
/** ms as an xs:duration in seconds ("PT1.5S"). */
export const xmlDuration = (ms: number): string => `PT${xmlNumber(Math.max(0, ms) / 1000)}S`;

function rangeOf(node: unknown): Range | null {
  const min = numberOf(at(node, 'min'));
  const max = numberOf(at(node, 'max'));
  return min !== null && max !== null && min < max ? { min, max } : null;
}

/** The FOV space among a PTZSpaces element's relative pan/tilt translation spaces, when listed with its ranges. */
function fovOf(spaces: unknown): FovSpace | null {
  for (const space of listOf(spaces, 'relativePanTiltTranslationSpace')) {
    if (textOf(at(space, 'URI')) !== FOV_SPACE) continue;
    const x = rangeOf(at(space, 'XRange'));
    const y = rangeOf(at(space, 'YRange'));
    if (x && y) return { x, y };
  }
  return null;
}

export const GET_NODES = `<GetNodes xmlns="${PTZ_NS}"/>`;

/** Nodes as the camera lists them (a node is one pan/tilt/zoom mechanism; cameras have one). */
export function readNodes(body: XmlObject): PtzNode[] {
  return listOf(responseOf(body, 'GetNodesResponse'), 'PTZNode')
    .slice(0, 8)
    .map((n) => ({
      token: attrOf(n, 'token')?.slice(0, PTZ_LIMITS.tokenLength) ?? null,
      // ONVIF makes HomeSupported mandatory; a camera that leaves it out is taken at its word elsewhere.
      homeSupported: booleanOf(at(n, 'homeSupported')) ?? true,
      maxPresets: intOf(at(n, 'maximumNumberOfPresets')),
      fov: fovOf(at(n, 'supportedPTZSpaces')),
    }));
}

export const GET_CONFIGURATIONS = `<GetConfigurations xmlns="${PTZ_NS}"/>`;

/** The PTZ configurations (token and node), for a camera whose profiles do not show theirs. */
export function readConfigurations(body: XmlObject): Array<{ configurationToken: string; nodeToken: string | null }> {
  return listOf(responseOf(body, 'GetConfigurationsResponse'), 'PTZConfiguration').flatMap((c) => {
    const t = attrOf(c, 'token');
    if (!t || t.length > PTZ_LIMITS.tokenLength) return [];
    return [{ configurationToken: t, nodeToken: textOf(at(c, 'nodeToken'))?.slice(0, PTZ_LIMITS.tokenLength) ?? null }];
  });
}

export const getConfigurationOptions = (configurationToken: string): string =>
  `<GetConfigurationOptions xmlns="${PTZ_NS}"><ConfigurationToken>${token(configurationToken)}</ConfigurationToken></GetConfigurationOptions>`;

export function readConfigurationOptions(body: XmlObject): PtzOptions {
  const options = at(responseOf(body, 'GetConfigurationOptionsResponse'), 'PTZConfigurationOptions');
  const timeout = at(options, 'PTZTimeout');
  const min = durationMsOf(at(timeout, 'min'));
  const max = durationMsOf(at(timeout, 'max'));
  return {
    fov: fovOf(at(options, 'spaces')),
    timeout: min !== null && max !== null && min <= max ? { min, max } : null,
  };
}

export const getPresets = (profileToken: string): string =>
  `<GetPresets xmlns="${PTZ_NS}"><ProfileToken>${token(profileToken)}</ProfileToken></GetPresets>`;

/**
 * The presets in the camera's order: a preset without a token cannot be recalled and is left out,
 * one without a name is named by its token.
 */
export function readPresets(body: XmlObject): PtzPreset[] {
  const out: PtzPreset[] = [];
  for (const p of listOf(responseOf(body, 'GetPresetsResponse'), 'preset')) {
    const t = attrOf(p, 'token');
    if (!t || t.length > PTZ_LIMITS.tokenLength || out.some((o) => o.token === t)) continue;
    out.push({ token: t, name: (textOf(at(p, 'name')) ?? t).slice(0, PTZ_LIMITS.nameLength) });
    if (out.length === PTZ_LIMITS.presets) break;
  }
  return out;
}

export const setPreset = (profileToken: string, name: string): string =>
  `<SetPreset xmlns="${PTZ_NS}"><ProfileToken>${token(profileToken)}</ProfileToken><PresetName>${escapeXmlText(name)}</PresetName></SetPreset>`;

/** The new preset's token; null when the answer does not give one (the presets are read again). */
export function readSetPreset(body: XmlObject): string | null {
  const t = textOf(at(responseOf(body, 'SetPresetResponse'), 'presetToken'));
  return t && t.length <= PTZ_LIMITS.tokenLength ? t : null;
}

export const removePreset = (profileToken: string, presetToken: string): string =>
  `<RemovePreset xmlns="${PTZ_NS}"><ProfileToken>${token(profileToken)}</ProfileToken><PresetToken>${token(presetToken)}</PresetToken></RemovePreset>`;

export const gotoPreset = (profileToken: string, presetToken: string): string =>
  `<GotoPreset xmlns="${PTZ_NS}"><ProfileToken>${token(profileToken)}</ProfileToken><PresetToken>${token(presetToken)}</PresetToken></GotoPreset>`;

export const gotoHomePosition = (profileToken: string): string =>
  `<GotoHomePosition xmlns="${PTZ_NS}"><ProfileToken>${token(profileToken)}</ProfileToken></GotoHomePosition>`;

export interface Velocity {
  pan: number;
  tilt: number;
  zoom: number;
}

/** `timeoutMs`: the camera stops by itself then too (null: not sent, its configuration's default). */
export const continuousMove = (profileToken: string, v: Velocity, timeoutMs: number | null): string =>
  `<ContinuousMove xmlns="${PTZ_NS}"><ProfileToken>${token(profileToken)}</ProfileToken><Velocity>` +
  `<PanTilt ${TT} x="${xmlNumber(v.pan)}" y="${xmlNumber(v.tilt)}"/><Zoom ${TT} x="${xmlNumber(v.zoom)}"/></Velocity>` +
  `${timeoutMs === null ? '' : `<Timeout>${xmlDuration(timeoutMs)}</Timeout>`}</ContinuousMove>`;

export const stop = (profileToken: string): string =>
  `<Stop xmlns="${PTZ_NS}"><ProfileToken>${token(profileToken)}</ProfileToken><PanTilt>true</PanTilt><Zoom>true</Zoom></Stop>`;

/** A pan/tilt translation in the field-of-view space (x, y in the camera's own range of it). */
export const relativeMoveFov = (profileToken: string, x: number, y: number): string =>
  `<RelativeMove xmlns="${PTZ_NS}"><ProfileToken>${token(profileToken)}</ProfileToken><Translation>` +
  `<PanTilt ${TT} x="${xmlNumber(x)}" y="${xmlNumber(y)}" space="${FOV_SPACE}"/></Translation></RelativeMove>`;

/**
 * A point of the picture (0–1 from its top-left corner) as a translation in the camera's FOV space:
 * the centre is no move, an edge half the field of view, mapped linearly onto the space's range (its
 * ends are the edges). ONVIF's y grows upwards, the picture's downwards.
 */
export function fovTranslation(fov: FovSpace, point: { x: number; y: number }): { x: number; y: number } {
  const onto = (r: Range, t: number) => r.min + ((t + 1) / 2) * (r.max - r.min);
  return { x: onto(fov.x, 2 * point.x - 1), y: onto(fov.y, 1 - 2 * point.y) };
}
