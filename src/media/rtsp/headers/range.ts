import { fail, hasControlChar, parseUint, splitOutsideQuotes, splitParam, trimLws } from './syntax.js';

// Range (RFC 2326 §12.29, time formats §3.5–3.7). Only Normal Play Time is interpreted: it is
// what players send in PLAY (`npt=0.000-`, `npt=now-`) and what live cameras answer. SMPTE and
// absolute `clock=` ranges are carried as opaque text for a relay to pass on.

/** Seconds from the start of the presentation, or `now` for a live stream's current position. */
export type NptTime = number | 'now';

export interface NptRange {
  unit: 'npt';
  /** `null` only in the RFC 2326 form `npt=-end`. */
  start: NptTime | null;
  /** `null` for an open range (`npt=0-`). */
  end: NptTime | null;
  /** The `;time=` parameter (when to start), as written. */
  time?: string;
}

export interface OpaqueRange {
  unit: 'clock' | 'smpte' | 'smpte-30-drop' | 'smpte-25';
  /** Everything after `unit=`, e.g. `19961108T142300Z-19961108T143520Z`. */
  value: string;
  time?: string;
}

export type RangeHeader = NptRange | OpaqueRange;

const OPAQUE_UNITS: ReadonlySet<string> = new Set(['clock', 'smpte', 'smpte-30-drop', 'smpte-25']);

/** Beyond this many integer digits a time is no longer a number of seconds anyone means. */
const MAX_INT_DIGITS = 12;

function isOpaqueUnit(unit: string): unit is OpaqueRange['unit'] {
  return OPAQUE_UNITS.has(unit);
}

function isOpaqueText(text: string): boolean {
  return /^[^\s;,"]+$/.test(text) && !hasControlChar(text);
}

function parseNptTime(text: string): NptTime {
  if (text.toLowerCase() === 'now') return 'now';
  const m = /^(\d+)(?::(\d{1,2}):(\d{1,2}))?(?:\.(\d*))?$/.exec(text);
  if (m === null) fail('invalid npt time');
  const [, first = '', mm, ss, frac] = m;
  let significant = 0;
  while (significant < first.length - 1 && first.charCodeAt(significant) === 0x30) significant++;
  if (first.length - significant > MAX_INT_DIGITS) fail('npt time out of range');
  let seconds: number;
  if (mm !== undefined && ss !== undefined) {
    const minutes = parseUint(mm, 59, 'npt minutes');
    const secs = parseUint(ss, 59, 'npt seconds');
    seconds = Number(first) * 3600 + minutes * 60 + secs + (frac ? Number(`0.${frac}`) : 0);
  } else {
    // Converting the whole decimal at once gives the nearest double, so formatting and
    // parsing again lands on the same number.
    seconds = Number(text);
  }
  if (seconds >= 10 ** MAX_INT_DIGITS) fail('npt time out of range');
  return seconds;
}

function parseNptRange(text: string): { start: NptTime | null; end: NptTime | null } {
  const dash = text.indexOf('-');
  if (dash < 0) fail('npt range needs a -');
  const a = trimLws(text.slice(0, dash));
  const b = trimLws(text.slice(dash + 1));
  if (a === '' && b === '') fail('empty npt range');
  return { start: a === '' ? null : parseNptTime(a), end: b === '' ? null : parseNptTime(b) };
}

/** One range only: RFC 2326's list form is unused by players and removed in RFC 7826. */
export function parseRange(value: string): RangeHeader {
  if (hasControlChar(value)) fail('control character in Range');
  const parts = splitOutsideQuotes(value, ';');
  const spec = parts[0] ?? '';
  const eq = spec.indexOf('=');
  if (eq < 0) fail('Range needs a unit');
  if (spec.includes(',')) fail('only one range is supported');
  const unit = trimLws(spec.slice(0, eq)).toLowerCase();
  const rest = trimLws(spec.slice(eq + 1));
  let out: RangeHeader;
  if (unit === 'npt') {
    out = { unit, ...parseNptRange(rest) };
  } else if (isOpaqueUnit(unit)) {
    if (!isOpaqueText(rest)) fail(`invalid ${unit} range`);
    out = { unit, value: rest };
  } else {
    fail('unknown Range unit');
  }
  for (let i = 1; i < parts.length; i++) {
    const part = parts[i] ?? '';
    if (part === '') continue;
    const { name, value: v } = splitParam(part);
    if (name !== 'time') continue;
    if (out.time !== undefined) fail('duplicate Range time');
    if (v === null || !isOpaqueText(v)) fail('invalid Range time');
    out.time = v;
  }
  return out;
}

function formatNptTime(t: NptTime): string {
  if (t === 'now') return 'now';
  if (!Number.isFinite(t) || t < 0 || t >= 10 ** MAX_INT_DIGITS) throw new TypeError('invalid npt time');
  // Nine decimals keep any value a peer could have sent in milliseconds or microseconds exact
  // after a parse round trip, without ever producing exponent notation.
  const fixed = t.toFixed(9);
  const trimmed = fixed.replace(/0+$/, '');
  return trimmed.endsWith('.') ? trimmed.slice(0, -1) : trimmed;
}

export function formatRange(range: RangeHeader): string {
  let out: string;
  if (range.unit === 'npt') {
    if (range.start === null && range.end === null) throw new TypeError('an npt range needs a start or an end');
    out = `npt=${range.start === null ? '' : formatNptTime(range.start)}-${range.end === null ? '' : formatNptTime(range.end)}`;
  } else {
    if (!isOpaqueUnit(range.unit) || !isOpaqueText(range.value)) throw new TypeError(`invalid ${range.unit} range`);
    out = `${range.unit}=${range.value}`;
  }
  if (range.time !== undefined) {
    if (!isOpaqueText(range.time)) throw new TypeError('invalid Range time');
    out += `;time=${range.time}`;
  }
  return out;
}
