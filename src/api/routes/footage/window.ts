import Type from 'typebox';
import { NotFoundError } from '../../../domain/errors.js';
import { DATE_FILTER_PATTERN, parseDateBound } from '../../date-filter.js';
import { badRequest, DateFilterError } from '../../errors.js';
import type { FootageRoutesOptions } from './options.js';

// The time window every footage route takes (start, end), checked once for all of them.

/** The longest window one request may ask for (a download of more is several requests). */
export const MAX_WINDOW_MS = 24 * 3_600_000;

export const WindowQuery = Type.Object(
  {
    start: Type.String({
      pattern: DATE_FILTER_PATTERN,
      description:
        "Start of the window: a date-time with offset (or YYYY-MM-DD: that day's start in the gateway's time zone)",
    }),
    end: Type.String({
      pattern: DATE_FILTER_PATTERN,
      description: "End of the window (exclusive): a date-time with offset (or YYYY-MM-DD: that day's end)",
    }),
  },
  { additionalProperties: false },
);

function parse(value: string, name: string, bound: 'start' | 'end'): number {
  try {
    return parseDateBound(value, bound) + (bound === 'end' && !value.includes('T') ? 1 : 0);
  } catch (err) {
    if (err instanceof DateFilterError) throw badRequest(`query parameter ${name} ${err.message}`);
    throw err;
  }
}

/** [startMs, endMs) of the query; a 400 when it is empty, reversed or longer than maxMs. */
export function footageWindow(
  query: { start: string; end: string },
  maxMs: number = MAX_WINDOW_MS,
): { startMs: number; endMs: number } {
  const startMs = parse(query.start, 'start', 'start');
  const endMs = parse(query.end, 'end', 'end');
  if (startMs >= endMs) throw badRequest('query parameter start must be before end');
  if (endMs - startMs > maxMs)
    throw badRequest(`the window is longer than ${maxMs / 3_600_000} hours: ask for it in parts`);
  return { startMs, endMs };
}

/** The 404 of a window of a device that holds no footage. */
export function noFootageIn(deviceId: string, startMs: number, endMs: number): NotFoundError {
  return new NotFoundError(
    'footage',
    `${deviceId} between ${new Date(startMs).toISOString()} and ${new Date(endMs).toISOString()}`,
  );
}

/** Continuous recording, or a 404 when it is off. */
export function requireFootage(footage: FootageRoutesOptions['footage']): NonNullable<FootageRoutesOptions['footage']> {
  if (!footage)
    throw new NotFoundError('footage', 'of any camera: continuous recording is off (recording.continuous.enabled)');
  return footage;
}

/** A 404 for a device the gateway does not know. */
export function requireDevice(
  store: FootageRoutesOptions['store'],
  deviceId: string,
): NonNullable<ReturnType<FootageRoutesOptions['store']['getDevice']>> {
  const device = store.getDevice(deviceId);
  if (!device) throw new NotFoundError('device', deviceId);
  return device;
}
