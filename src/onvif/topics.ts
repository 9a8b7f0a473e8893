import type { Notification } from './notification.js';

// Maps vendor ONVIF event topics to the gateway's three event kinds. Vendors disagree on prefixes
// ("tns1:", "tnsaxis:", one per segment or only on the first), on case and on which data item holds
// the state, so topics are compared with prefixes stripped and case folded, and the state item is
// looked up by the names each vendor is known to use.

export type EventKind = 'motion' | 'human' | 'vehicle';

export interface Classification {
  kind: EventKind;
  /** Whether the detector reports activity now. A momentary classification is always active. */
  active: boolean;
  /** Identifies one detector on the camera: normalised topic plus its source items. */
  key: string;
  /**
   * Set for detectors that only report "it happened" (a line crossed, an object seen) and never
   * send an end; the tracker treats them as active for an instant.
   */
  momentary?: true;
}

interface FixedTopic {
  kind: EventKind;
  /** Data item names holding the state, in order of preference. */
  state: readonly string[];
}

// Keys are normalised topics (see normaliseTopic): prefixes stripped, lower case.
const FIXED_TOPICS: ReadonlyMap<string, FixedTopic> = new Map<string, FixedTopic>([
  // ONVIF core motion alarm: Hikvision, Dahua, D-Link (the captured DCS firmware), Axis, most OEMs.
  ['videosource/motionalarm', { kind: 'motion', state: ['State'] }],
  // ONVIF cell motion detector: Hikvision, Dahua, Uniview, Reolink, TP-Link, D-Link.
  ['ruleengine/cellmotiondetector/motion', { kind: 'motion', state: ['IsMotion'] }],
  // ONVIF Profile T motion region detector: Axis, Bosch, Hanwha.
  ['ruleengine/motionregiondetector/motion', { kind: 'motion', state: ['State'] }],
  // Reolink AI detection ("MyRuleDetector").
  ['ruleengine/myruledetector/peopledetect', { kind: 'human', state: ['State'] }],
  ['ruleengine/myruledetector/vehicledetect', { kind: 'vehicle', state: ['State'] }],
  // TP-Link (Tapo / VIGI) person detection.
  ['ruleengine/peopledetector/people', { kind: 'human', state: ['IsPeople'] }],
  // Uniview (and its OEMs) human shape detection.
  ['useralarm/iva/humanshapedetect', { kind: 'human', state: ['State'] }],
]);

// TP-Link's combined smart event: one topic, the data item name says what was detected.
const TP_SMART_EVENT = 'ruleengine/tpsmarteventdetector/tpsmartevent';
const TP_SMART_ITEMS: ReadonlyArray<readonly [string, EventKind]> = [
  ['IsPeople', 'human'],
  ['IsVehicle', 'vehicle'],
];

// Analytics topics whose kind comes from an object class item rather than the topic: ONVIF
// ObjectDetection (Ajax, Dahua-like firmware) and the ONVIF field (intrusion) and line-crossing
// detectors (Hikvision, Dahua), which count only when the firmware attaches a class item.
function isClassTopic(topic: string): boolean {
  return (
    topic === 'ruleengine/objectdetection/object' ||
    topic.startsWith('ruleengine/fielddetector/') ||
    topic.startsWith('ruleengine/linedetector/')
  );
}
const CLASS_STATE_ITEMS: readonly string[] = ['State', 'IsInside', 'IsDetected', 'Detected', 'IsCrossed'];
const CLASS_ITEMS: readonly string[] = ['ClassTypes', 'ClassType', 'ObjectType', 'ObjectClass', 'Class'];
const HUMAN_CLASSES: ReadonlySet<string> = new Set(['human', 'humanbody', 'person', 'people', 'pedestrian']);
// "vehical" is a spelling some firmware really uses.
const VEHICLE_CLASSES: ReadonlySet<string> = new Set([
  'vehicle',
  'vehical',
  'motorvehicle',
  'car',
  'truck',
  'bus',
  'van',
  'motorcycle',
  'motorbike',
]);

// Source values come from the camera; a key is kept in memory per detector, so its size is capped.
const MAX_KEY_LENGTH = 512;

/**
 * Strips namespace prefixes from every segment, surrounding slashes, the "//." some firmware
 * appends (a topic-expression artefact), and folds case.
 */
export function normaliseTopic(topic: string): string {
  return topic
    .trim()
    .replace(/\/\/\.$/, '')
    .split('/')
    .map((segment) => segment.slice(segment.lastIndexOf(':') + 1).trim())
    .filter((segment) => segment.length > 0)
    .join('/')
    .toLowerCase();
}

/** "true"/"1" (any case) → true, "false"/"0" → false, anything else → null. */
export function parseFlag(value: string | undefined): boolean | null {
  const v = value?.trim().toLowerCase();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  return null;
}

function item(items: Record<string, string>, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(items)) {
    if (k.toLowerCase() === lower) return v;
  }
  return undefined;
}

/**
 * The state from the first named item present, else (when allowed) from the only data item if
 * there is exactly one: several firmwares name their single state item idiosyncratically.
 */
function readState(
  data: Record<string, string>,
  names: readonly string[],
  fallBackToOnlyItem: boolean,
): boolean | null {
  for (const name of names) {
    const v = item(data, name);
    if (v !== undefined) return parseFlag(v);
  }
  const values = Object.values(data);
  return fallBackToOnlyItem && values.length === 1 ? parseFlag(values[0]) : null;
}

function classOf(n: Notification): EventKind | null {
  for (const items of [n.data, n.source]) {
    for (const name of CLASS_ITEMS) {
      const v = item(items, name);
      if (v === undefined) continue;
      const tokens = v.toLowerCase().split(/[\s,;|]+/);
      // A person is the more specific alert, so it wins when one message names both classes.
      if (tokens.some((t) => HUMAN_CLASSES.has(t))) return 'human';
      if (tokens.some((t) => VEHICLE_CLASSES.has(t))) return 'vehicle';
    }
  }
  return null;
}

function keyOf(topic: string, source: Record<string, string>): string {
  const parts = Object.entries(source)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`);
  const key = [topic, ...parts].join('|');
  return key.length > MAX_KEY_LENGTH ? key.slice(0, MAX_KEY_LENGTH) : key;
}

/**
 * Classifies a notification as motion, human or vehicle detection, or null when the topic is not
 * one we map or its state cannot be read. Pure; never throws on camera input.
 */
export function classify(n: Notification): Classification | null {
  const topic = normaliseTopic(n.topic);
  const key = keyOf(topic, n.source);
  // A deleted property (rule removed, channel gone) no longer reports activity.
  const deleted = n.operation === 'Deleted';

  const fixed = FIXED_TOPICS.get(topic);
  if (fixed) {
    const active = deleted ? false : readState(n.data, fixed.state, true);
    return active === null ? null : { kind: fixed.kind, active, key };
  }

  if (topic === TP_SMART_EVENT) {
    for (const [name, kind] of TP_SMART_ITEMS) {
      const v = item(n.data, name);
      if (v === undefined) continue;
      const active = deleted ? false : parseFlag(v);
      if (active !== null) return { kind, active, key };
    }
    return null;
  }

  if (isClassTopic(topic)) {
    const kind = classOf(n);
    if (kind === null) return null;
    if (deleted) return { kind, active: false, key };
    // No fallback here: the only data item of a crossing is often an ObjectId such as "1" or "0".
    const active = readState(n.data, CLASS_STATE_ITEMS, false);
    if (active !== null) return { kind, active, key };
    // No state at all: a crossing or sighting that will never be followed by an "end".
    return { kind, active: true, key, momentary: true };
  }

  return null;
}
