import { LIMITS, polygonFault, faultText, ZONE_NAME, type Point, type Polygon } from './polygon.js';
import type { CameraSettings, DevicePatch } from './types.js';

// A camera's motion mask and zones as the editor holds them while they are changed: the lists,
// which of them the problems are in (what the API would refuse), and the change to send (only
// the lists that differ from the camera's). Pure, so tests run it without a browser.

export interface ZoneDraft {
  name: string;
  polygon: Point[];
  required: boolean;
  /** Something that has not moved inside it alerts all the same. */
  alert_on_stationary: boolean;
  /** A person alerts only once they have stayed this many seconds; null: no such rule. */
  loitering_s: number | null;
}

export interface Areas {
  mask: Point[][];
  zones: ZoneDraft[];
}

/** One polygon of the lists: a mask area or a zone, by its place. */
export interface AreaRef {
  kind: 'mask' | 'zone';
  index: number;
}

export interface AreaProblem {
  /** null: the lists as a whole (too many). */
  ref: AreaRef | null;
  field: 'polygon' | 'name' | 'loitering' | null;
  message: string;
}

const points = (polygon: readonly (readonly number[])[]): Point[] => polygon.map((p) => [p[0]!, p[1]!] as const);

export function areasOf(settings: CameraSettings): Areas {
  return {
    mask: settings.motion_mask.map(points),
    zones: settings.zones.map((z) => ({
      name: z.name,
      polygon: points(z.polygon),
      required: z.required,
      alert_on_stationary: z.alert_on_stationary,
      loitering_s: z.loitering_s,
    })),
  };
}

export function sameRef(a: AreaRef | null, b: AreaRef | null): boolean {
  return a !== null && b !== null && a.kind === b.kind && a.index === b.index;
}

export function polygonAt(areas: Areas, ref: AreaRef): Polygon | null {
  return (ref.kind === 'mask' ? areas.mask[ref.index] : areas.zones[ref.index]?.polygon) ?? null;
}

export function withPolygon(areas: Areas, ref: AreaRef, polygon: Point[]): Areas {
  if (ref.kind === 'mask') return { ...areas, mask: areas.mask.map((p, i) => (i === ref.index ? polygon : p)) };
  return { ...areas, zones: areas.zones.map((z, i) => (i === ref.index ? { ...z, polygon } : z)) };
}

export function withZone(areas: Areas, index: number, change: Partial<Omit<ZoneDraft, 'polygon'>>): Areas {
  return { ...areas, zones: areas.zones.map((z, i) => (i === index ? { ...z, ...change } : z)) };
}

export function withoutArea(areas: Areas, ref: AreaRef): Areas {
  return ref.kind === 'mask'
    ? { ...areas, mask: areas.mask.filter((_, i) => i !== ref.index) }
    : { ...areas, zones: areas.zones.filter((_, i) => i !== ref.index) };
}

/** The lists with a new polygon at the end of its kind's; its ref. */
export function withNewArea(areas: Areas, kind: AreaRef['kind'], polygon: Point[]): [Areas, AreaRef] {
  if (kind === 'mask')
    return [
      { ...areas, mask: [...areas.mask, polygon] },
      { kind, index: areas.mask.length },
    ];
  const zone = {
    name: newZoneName(areas.zones),
    polygon,
    required: false,
    alert_on_stationary: false,
    loitering_s: null,
  };
  return [
    { ...areas, zones: [...areas.zones, zone] },
    { kind, index: areas.zones.length },
  ];
}

/** zone-1, zone-2…: the first such name not taken. */
export function newZoneName(zones: readonly ZoneDraft[]): string {
  const taken = new Set(zones.map((z) => z.name));
  for (let n = zones.length + 1; ; n++) if (!taken.has(`zone-${n}`)) return `zone-${n}`;
}

/** What the editor calls a polygon: "Mask area 2", "Zone porch". */
export function areaLabel(areas: Areas, ref: AreaRef): string {
  if (ref.kind === 'mask') return `Mask area ${ref.index + 1}`;
  const name = areas.zones[ref.index]?.name ?? '';
  return name ? `Zone ${name}` : `Zone ${ref.index + 1} (no name)`;
}

export function canAdd(areas: Areas, kind: AreaRef['kind']): boolean {
  return kind === 'mask' ? areas.mask.length < LIMITS.polygons : areas.zones.length < LIMITS.zones;
}

/** What the API would refuse in these lists, each where it is (src/domain/camera-settings.ts, settingsProblem). */
export function areasProblems(areas: Areas): AreaProblem[] {
  const problems: AreaProblem[] = [];
  if (areas.mask.length > LIMITS.polygons)
    problems.push({ ref: null, field: null, message: `The mask may have at most ${LIMITS.polygons} areas.` });
  if (areas.zones.length > LIMITS.zones)
    problems.push({ ref: null, field: null, message: `A camera may have at most ${LIMITS.zones} zones.` });
  const polygonProblem = (ref: AreaRef, polygon: Polygon) => {
    const fault = polygonFault(polygon);
    if (fault) problems.push({ ref, field: 'polygon', message: faultText(fault) });
    else if (polygon.length > LIMITS.corners)
      problems.push({ ref, field: 'polygon', message: `It has ${polygon.length} corners; at most ${LIMITS.corners}.` });
  };
  areas.mask.forEach((polygon, index) => polygonProblem({ kind: 'mask', index }, polygon));
  const names = new Set<string>();
  areas.zones.forEach((zone, index) => {
    const ref: AreaRef = { kind: 'zone', index };
    if (!ZONE_NAME.test(zone.name))
      problems.push({ ref, field: 'name', message: 'A name is 1–64 letters, digits, _ or - (no spaces).' });
    else if (names.has(zone.name))
      problems.push({ ref, field: 'name', message: `Another zone is called ${zone.name}.` });
    names.add(zone.name);
    if (
      zone.loitering_s !== null &&
      !(Number.isInteger(zone.loitering_s) && zone.loitering_s >= 1 && zone.loitering_s <= LIMITS.loiteringS)
    )
      problems.push({ ref, field: 'loitering', message: `Stay a whole number of seconds, 1 to ${LIMITS.loiteringS}.` });
    polygonProblem(ref, zone.polygon);
  });
  return problems;
}

const maskJson = (mask: readonly (readonly (readonly number[])[])[]) => JSON.stringify(mask);
type ZoneFields = Omit<ZoneDraft, 'polygon'> & { polygon: readonly (readonly number[])[] };
const zonesJson = (zones: readonly ZoneFields[]) =>
  JSON.stringify(zones.map((z) => [z.name, z.polygon, z.required, z.alert_on_stationary, z.loitering_s]));

/** The change to send: each list only when it differs from the camera's. */
export function areasPatch(areas: Areas, settings: CameraSettings): Pick<DevicePatch, 'motion_mask' | 'zones'> {
  const patch: Pick<DevicePatch, 'motion_mask' | 'zones'> = {};
  if (maskJson(areas.mask) !== maskJson(settings.motion_mask))
    patch.motion_mask = areas.mask.map((polygon) => polygon.map((p) => [...p]));
  if (zonesJson(areas.zones) !== zonesJson(settings.zones))
    patch.zones = areas.zones.map((z) => ({
      name: z.name,
      polygon: z.polygon.map((p) => [...p]),
      required: z.required,
      alert_on_stationary: z.alert_on_stationary,
      loitering_s: z.loitering_s,
    }));
  return patch;
}

/**
 * Which polygon a 400 of the API names, if one: `body field zones[1].name …` (the gateway's own
 * checks) or `body field zones.1.name …` (its schema's).
 */
export function areaOfApiError(description: string): { ref: AreaRef; field: AreaProblem['field'] } | null {
  const m = /\bbody field (motion_mask|zones)(?:\[(\d+)\]|\.(\d+))(?:\.(name|polygon|loitering_s))?/.exec(description);
  if (!m) return null;
  const ref: AreaRef = { kind: m[1] === 'zones' ? 'zone' : 'mask', index: Number(m[2] ?? m[3]) };
  if (m[1] !== 'zones') return { ref, field: 'polygon' };
  return { ref, field: m[4] === 'loitering_s' ? 'loitering' : ((m[4] as 'name' | 'polygon' | undefined) ?? null) };
}

/**
 * The mask and zones being edited once the camera's have changed elsewhere from `base` to `next`:
 * the new ones when nothing was changed here, else what is being edited (saving it is the user's
 * choice to replace them).
 */
export function rebaseAreas(areas: Areas, base: CameraSettings, next: CameraSettings): Areas {
  return Object.keys(areasPatch(areas, base)).length === 0 ? areasOf(next) : areas;
}
