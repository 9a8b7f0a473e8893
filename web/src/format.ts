// Times as people read them, in the browser's own time zone and language.

// Made on first use, not when the script loads: the first DateTimeFormat loads the browser's
// locale data (20–60 ms on a Pi-class CPU), and at load it would hold back the app's first
// request (the sign-in's code exchange) by that much. The first times shown come later.
let timeFormat: Intl.DateTimeFormat | null = null;
let dateTimeFormat: Intl.DateTimeFormat | null = null;

export function when(iso: string, now = Date.now()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const ago = Math.round((now - t) / 1000);
  if (ago < 45 && ago > -5) return 'just now';
  if (ago < 3600 && ago > 0) return `${Math.round(ago / 60)} min ago`;
  const sameDay = new Date(t).toDateString() === new Date(now).toDateString();
  if (sameDay)
    return (timeFormat ??= new Intl.DateTimeFormat(undefined, {
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })).format(t);
  return (dateTimeFormat ??= new Intl.DateTimeFormat(undefined, {
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
  })).format(t);
}

export function duration(seconds: number): string {
  const s = Math.round(seconds);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** YYYY-MM-DD of a local date, as <input type="date"> and the API's date filters take it. */
export function localDate(t: number): string {
  const d = new Date(t);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

let momentFormat: Intl.DateTimeFormat | null = null;
let dayFormat: Intl.DateTimeFormat | null = null;
let clockFormat: Intl.DateTimeFormat | null = null;

/** A moment of footage in full: weekday, date and time to the second (the timeline's playhead). */
export function momentText(t: number): string {
  return (momentFormat ??= new Intl.DateTimeFormat(undefined, {
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  })).format(t);
}

/** A timeline tick: the weekday and day at a midnight, else the hour and minute. */
export function tickText(t: number, day: boolean): string {
  if (day) return (dayFormat ??= new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric' })).format(t);
  return (clockFormat ??= new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' })).format(t);
}

/** Bytes as people read them (decimal units, as disks are sold). */
export function bytesText(bytes: number): string {
  if (bytes < 1e6) return `${Math.round(bytes / 1e3)} kB`;
  if (bytes < 1e9) return `${(bytes / 1e6).toFixed(1)} MB`;
  if (bytes < 1e12) return `${(bytes / 1e9).toFixed(1)} GB`;
  return `${(bytes / 1e12).toFixed(2)} TB`;
}

/** A long span of time in its two largest units: "3 d 4 h", "5 h 12 min", "42 min", "30 s". */
export function uptimeText(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h} h ${m} min`;
  return m > 0 ? `${m} min` : `${s} s`;
}

/** Bytes in gigabytes (decimal, as disks are sold), to a tenth. */
export function gbText(bytes: number): string {
  return `${(bytes / 1e9).toFixed(1)} GB`;
}
