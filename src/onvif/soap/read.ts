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
