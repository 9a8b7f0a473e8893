import { DateFilterError } from './errors.js';

// start_date / end_date of the recordings list: a calendar date (the whole day in the gateway's
// time zone) or a date-time with an explicit offset. Both bounds are inclusive.

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})$/i;

export const DATE_FILTER_PATTERN =
  '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?([Zz]|[+-]\\d{2}:\\d{2}))?$';

export type DateBound = 'start' | 'end';

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function checkCalendar(y: number, m: number, d: number): void {
  if (y < 1970) throw new DateFilterError('is before 1970');
  if (m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) throw new DateFilterError('is not a real calendar date');
}

/**
 * Milliseconds since the epoch for one bound. A bare date's start is local midnight and its end the
 * last millisecond before the next local midnight, so DST days have 23 or 25 hours as they should.
 */
export function parseDateBound(text: string, bound: DateBound): number {
  const date = DATE.exec(text);
  if (date) {
    const [y, m, d] = [Number(date[1]), Number(date[2]), Number(date[3])];
    checkCalendar(y, m, d);
    if (bound === 'start') return new Date(y, m - 1, d).getTime();
    return new Date(y, m - 1, d + 1).getTime() - 1;
  }
  const dt = DATE_TIME.exec(text);
  if (!dt)
    throw new DateFilterError('must be a date (YYYY-MM-DD) or a date-time with an offset (e.g. 2026-11-22T08:00:00Z)');
  const [y, m, d, hh, mm] = [1, 2, 3, 4, 5].map((i) => Number(dt[i])) as [number, number, number, number, number];
  const ss = dt[6] === undefined ? 0 : Number(dt[6]);
  checkCalendar(y, m, d);
  if (hh > 23 || mm > 59 || ss > 59) throw new DateFilterError('has a time of day out of range');
  const offset = (dt[8] as string).toUpperCase();
  if (offset !== 'Z') {
    const oh = Number(offset.slice(1, 3));
    const om = Number(offset.slice(4, 6));
    if (oh > 23 || om > 59) throw new DateFilterError('has an offset out of range');
  }
  const fraction = dt[7] ?? '';
  // Date.parse keeps milliseconds; finer digits are truncated (an end bound then still includes its whole millisecond).
  const normalised = `${dt[1]}-${dt[2]}-${dt[3]}T${dt[4]}:${dt[5]}:${String(ss).padStart(2, '0')}.${fraction.padEnd(3, '0').slice(0, 3)}${offset}`;
  const ms = Date.parse(normalised);
  if (Number.isNaN(ms)) throw new DateFilterError('is not a valid date-time');
  return ms;
}
