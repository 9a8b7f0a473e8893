import { CameraFaultError } from '../errors.js';
import { childOf, firstOf, isXmlObject, type XmlObject } from '../soap-xml.js';

// Narrowing readers over the parsed (xml2js-shaped) answers: each returns a value or null, never
// throws on what a camera sent; `responseOf` is the one place a missing answer becomes a fault.

/** The operation's response element in a Body; a fault when the camera answered something else. */
export function responseOf(body: XmlObject, name: string): XmlObject {
  const raw = childOf(body, name);
  if (raw === undefined) throw new CameraFaultError(`answer without ${name}`);
  const node = firstOf(raw);
  // An empty element (<SetSystemDateAndTimeResponse/>) parses as ''.
  return isXmlObject(node) ? node : {};
}

/** A child element by path, e.g. at(x, 'mediaUri', 'uri'); undefined when any step is missing. */
export function at(node: unknown, ...path: string[]): unknown {
  let cur: unknown = node;
  for (const name of path) {
    const obj = firstOf(cur);
    if (!isXmlObject(obj)) return undefined;
    cur = childOf(obj, name);
  }
  return cur;
}

/** Text content (trimmed, non-empty) of an element or attribute value. */
export function textOf(v: unknown): string | null {
  const first = firstOf(v);
  const s = typeof first === 'string' ? first : isXmlObject(first) && typeof first._ === 'string' ? first._ : null;
  const t = s?.trim();
  return t ? t : null;
}

export function intOf(v: unknown): number | null {
  const t = textOf(v);
  return t !== null && /^\d{1,9}$/.test(t) ? Number(t) : null;
}

export function attrOf(node: unknown, name: string): string | null {
  const obj = firstOf(node);
  const attrs = isXmlObject(obj) ? obj.$ : undefined;
  return isXmlObject(attrs) ? textOf(childOf(attrs, name)) : null;
}

/** All elements of a repeated child (xml2js arrays), objects only. */
export function listOf(node: unknown, name: string): XmlObject[] {
  const obj = firstOf(node);
  if (!isXmlObject(obj)) return [];
  const raw = childOf(obj, name);
  return (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter(isXmlObject);
}

/** A decimal number (xs:float as cameras write it: "0.5", "-1", "1.0E2"), or null. */
export function numberOf(v: unknown): number | null {
  const t = textOf(v);
  if (t === null || t.length > 32 || !/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d{1,3})?$/.test(t)) return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
}

/** xs:boolean: "true"/"1" and "false"/"0" (any case), else null. */
export function booleanOf(v: unknown): boolean | null {
  const t = textOf(v)?.toLowerCase();
  return t === 'true' || t === '1' ? true : t === 'false' || t === '0' ? false : null;
}

/** An xs:duration of hours, minutes and seconds ("PT1S", "PT0.5S", "PT1M30S") in ms, or null. */
export function durationMsOf(v: unknown): number | null {
  const m = /^PT(?:(\d{1,4})H)?(?:(\d{1,6})M)?(?:(\d{1,7}(?:\.\d{1,6})?)S)?$/i.exec(textOf(v) ?? '');
  if (!m || (m[1] === undefined && m[2] === undefined && m[3] === undefined)) return null;
  return Math.round((Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0)) * 1000);
}
