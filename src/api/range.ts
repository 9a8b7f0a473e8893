// The Range request header for recording downloads (RFC 9110 §14). One byte range is served;
// anything else is ignored as the RFC allows, so the client gets the whole file with 200.

export type RangeResult =
  | { kind: 'none' } // no header, or one we ignore: send everything
  | { kind: 'range'; start: number; end: number } // inclusive, within the file
  | { kind: 'unsatisfiable' }; // 416 with Content-Range: bytes */size

const SINGLE = /^bytes[ \t]*=[ \t]*(\d*)[ \t]*-[ \t]*(\d*)[ \t]*$/i;

/**
 * A byte position of any length. The digits are kept exact, because a position past 2^53 is still
 * a valid one (RFC 9110 puts no limit on them): it lies past the end of every file, so as a start
 * it is unsatisfiable and as an end it is clamped, never ignored.
 */
class Position {
  private readonly digits: string;

  constructor(text: string) {
    this.digits = text.replace(/^0+(?=\d)/, '');
  }

  /** Whether this is less than `other`, exactly. */
  lessThan(other: Position): boolean {
    const [a, b] = [this.digits, other.digits];
    return a.length !== b.length ? a.length < b.length : a < b;
  }

  /** The value when it is below `limit` (a safe integer), else `limit`. */
  capped(limit: number): number {
    if (this.digits.length > 15) return limit;
    return Math.min(Number(this.digits), limit);
  }
}

export function parseRange(header: string | undefined, size: number): RangeResult {
  if (header === undefined) return { kind: 'none' };
  const m = SINGLE.exec(header);
  if (!m) return { kind: 'none' }; // unknown unit, several ranges or bad syntax
  const [first, last] = [m[1] as string, m[2] as string];
  if (first === '' && last === '') return { kind: 'none' };
  if (first === '') {
    // suffix range: the last N bytes (all of them when N is larger than the file)
    const n = new Position(last).capped(size);
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'range', start: size - n, end: size - 1 };
  }
  const from = new Position(first);
  if (last !== '' && new Position(last).lessThan(from)) return { kind: 'none' }; // invalid range-spec: ignored per RFC 9110 §14.1.1
  const start = from.capped(size);
  if (start >= size) return { kind: 'unsatisfiable' };
  const end = last === '' ? size - 1 : new Position(last).capped(size - 1);
  return { kind: 'range', start, end };
}

export function contentRange(start: number, end: number, size: number): string {
  return `bytes ${start}-${end}/${size}`;
}
