// The Range request header for recording downloads (RFC 9110 §14). One byte range is served;
// anything else is ignored as the RFC allows, so the client gets the whole file with 200.

export type RangeResult =
  | { kind: 'none' } // no header, or one we ignore: send everything
  | { kind: 'range'; start: number; end: number } // inclusive, within the file
  | { kind: 'unsatisfiable' }; // 416 with Content-Range: bytes */size

const SINGLE = /^bytes[ \t]*=[ \t]*(\d*)[ \t]*-[ \t]*(\d*)[ \t]*$/i;

export function parseRange(header: string | undefined, size: number): RangeResult {
  if (header === undefined || header.length > 200) return { kind: 'none' };
  const m = SINGLE.exec(header);
  if (!m) return { kind: 'none' }; // unknown unit, several ranges or bad syntax
  const [first, last] = [m[1] as string, m[2] as string];
  if (first === '' && last === '') return { kind: 'none' };
  if (first.length > 15 || last.length > 15) return { kind: 'none' };
  if (first === '') {
    // suffix range: the last N bytes
    const n = Number(last);
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'range', start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(first);
  if (last !== '' && Number(last) < start) return { kind: 'none' }; // invalid range-spec: ignored per RFC 9110 §14.1.1
  if (start >= size) return { kind: 'unsatisfiable' };
  const end = last === '' ? size - 1 : Number(last);
  return { kind: 'range', start, end: Math.min(end, size - 1) };
}

export function contentRange(start: number, end: number, size: number): string {
  return `bytes ${start}-${end}/${size}`;
}
