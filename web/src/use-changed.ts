import { useEffect, useRef } from 'preact/hooks';

/**
 * Calls `onChange(before, now)` after a render in which `value` is another object than at the
 * render before (never after the first): a form holding a draft of a record hears that the record
 * changed under it (the event feed), to bring its untouched fields up to date.
 */
export function useChanged<T>(value: T, onChange: (before: T, now: T) => void): void {
  const last = useRef(value);
  const callback = useRef(onChange);
  callback.current = onChange;
  useEffect(() => {
    const before = last.current;
    if (Object.is(before, value)) return;
    last.current = value;
    callback.current(before, value);
  }, [value]);
}
