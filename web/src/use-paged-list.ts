import { useEffect, useRef, useState } from 'preact/hooks';
import { useApp } from './app.js';
import type { GatewayEvent } from './events.js';
import type { Page } from './types.js';

// A list of the API read a page at a time, newest first, as the Events and Clips screens show it:
// the first page when the filter changes (or the gateway is back), older pages on demand, and
// what the event feed tells of (a new item on top, an item changed) kept in it as it happens.

/** What a gateway event means for the list. */
type LiveChange<T> = { added: T } | { changed: T } | null;

interface PagedList<T> {
  /** null until the first page is in. */
  items: T[] | null;
  error: string | null;
  setError: (message: string | null) => void;
  /** Items the screen changed (marked as read): each replaces the one with its id. */
  replace: (changed: T[]) => void;
  /** Loads the next older page; null when there is none. */
  more: (() => void) | null;
}

/**
 * `key` names the filter `page` and `live` apply (null: nothing to list yet); a new key starts the
 * list over. `page` gets a page: the first without a cursor.
 */
export function usePagedList<T extends { id: string }>(
  key: string | null,
  page: (cursor?: string) => Promise<Page<T>>,
  live: (event: GatewayEvent) => LiveChange<T>,
): PagedList<T> {
  const { hub, epoch } = useApp();
  const [items, setItems] = useState<T[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  // The screen's functions are new at every render, but close over the filter `key` names: the
  // list starts over for a new key only, and meanwhile uses the latest of them.
  const screen = useRef({ page, live });
  screen.current = { page, live };
  /** Counts the starts over: a page asked for before the last one is dropped. */
  const run = useRef(0);

  useEffect(() => {
    if (key === null) return;
    const mine = ++run.current;
    setItems(null);
    setCursor(null);
    setError(null);
    screen.current
      .page()
      .then((first) => {
        if (run.current !== mine) return;
        setItems(first.data);
        setCursor(first.next_cursor);
      })
      .catch((err: unknown) => run.current === mine && setError(messageOf(err)));
    return hub.on((event) => {
      const change = screen.current.live(event);
      if (change && 'added' in change)
        setItems((list) => (list && !list.some((x) => x.id === change.added.id) ? [change.added, ...list] : list));
      if (change && 'changed' in change)
        setItems((list) => list && list.map((x) => (x.id === change.changed.id ? change.changed : x)));
    });
  }, [hub, key, epoch]);

  const replace = (changed: T[]) => {
    const byId = new Map(changed.map((x) => [x.id, x]));
    setItems((list) => list && list.map((x) => byId.get(x.id) ?? x));
  };

  const more =
    cursor === null
      ? null
      : () => {
          const mine = run.current;
          page(cursor)
            .then((next) => {
              if (run.current !== mine) return;
              setItems((list) => [...(list ?? []), ...next.data]);
              setCursor(next.next_cursor);
            })
            .catch((err: unknown) => run.current === mine && setError(messageOf(err)));
        };

  return { items, error, setError, replace, more };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : 'Loading failed.';
}
