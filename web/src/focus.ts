import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

// Keyboard focus that is never left on <body>: when what had the focus goes away (a screen
// replaced by another, a button that is gone once used), it moves somewhere that says where the
// user is. Headings get tabindex=-1 here, so they take focus from script but stay out of Tab order.

/** Focuses the shown screen's heading (else <main>); false when there is none yet (still loading). */
export function focusScreenHeading(): boolean {
  const target = document.querySelector<HTMLElement>('main h1') ?? null;
  if (target === null) return false;
  if (!target.hasAttribute('tabindex')) target.tabIndex = -1;
  target.focus();
  return true;
}

/** The focus is nowhere a keyboard user could go on from: <body>, or an element no longer in the page. */
export function focusIsLost(): boolean {
  const active = document.activeElement;
  return active === null || active === document.body || !active.isConnected;
}

/** Focuses the first of these that exists and can take focus; else the screen's heading. */
export function focusFirst(candidates: Array<HTMLElement | null | undefined>): void {
  for (const el of candidates) {
    if (!el || !el.isConnected || (el instanceof HTMLButtonElement && el.disabled)) continue;
    el.focus();
    if (document.activeElement === el) return;
  }
  focusScreenHeading();
}

/**
 * Focuses what a selector finds once the next render is done: for a control that render makes or
 * moves (a corner added, the one after a corner removed), which does not exist yet when asked.
 */
export function useFocusLater(): (selector: string) => void {
  const wanted = useRef<string | null>(null);
  const [, rendered] = useState(0);
  useEffect(() => {
    if (wanted.current === null) return;
    const el = document.querySelector<HTMLElement>(wanted.current);
    wanted.current = null;
    el?.focus();
  });
  return useCallback((selector: string) => {
    wanted.current = selector;
    rendered((n) => n + 1);
  }, []);
}
